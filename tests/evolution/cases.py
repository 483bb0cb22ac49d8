"""What the evolution tests build by hand: replayed cases with outside verdicts."""

from __future__ import annotations

from memory.models import Run, ShadowCase, SkillCandidate


def judged_cases(
    candidate: SkillCandidate, architect, n: int, *, verdict: str, agrees: bool
) -> None:
    """n real runs judged ``verdict`` from outside, each replayed by a shadow that agreed with
    it or not, at the same cost."""
    for i in range(n):
        real = Run.objects.create(
            architect=architect, verb="recall", text=f"q{i}", caller="t", channel="api",
            status="done", model_turns=2, model_seconds=1.0, verdict=verdict,
        )  # fmt: skip
        twin = Run.objects.create(
            architect=architect, verb="recall", text=f"q{i}", caller="t", channel="shadow",
            status="done", model_turns=2, model_seconds=1.0,
        )  # fmt: skip
        ShadowCase.objects.create(
            candidate=candidate, run=real, shadow=twin, status="done", agrees=agrees
        )
