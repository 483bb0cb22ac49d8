"""Skill evolution's measurements: an answer in brief, whether two agree, a skill's misses, the
two versions' figures over a candidate's cases, and the verdict on them. Reads run facts, writes
nothing."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from fractions import Fraction
from typing import Any

from django.conf import settings
from django.utils import timezone

from memory import language
from memory.models import Run, SkillCandidate, ToolCall


def brief(*, found: bool, ids: Iterable[str] = (), text: str = "") -> dict[str, Any]:
    """What of an answer two versions are compared on: found or not, the ids it rests on, and
    its content terms (for an answer that names no ids: a model's text)."""
    return {
        "found": bool(found),
        "ids": sorted({str(i) for i in ids if i}),
        "terms": sorted(set(language.keywords(text or "")))[:200],
    }


def _jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a | b else 1.0


def agree(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Do two answers say the same? Both found nothing; or both found, resting on the same ids
    (Jaccard ≥ SHADOW_AGREE_MIN), or — when neither names ids — saying the same content terms."""
    if a.get("found") != b.get("found"):
        return False
    if not a.get("found"):
        return True
    floor = settings.SHADOW_AGREE_MIN
    if a.get("ids") or b.get("ids"):
        return _jaccard(a.get("ids", []), b.get("ids", [])) >= floor
    return _jaccard(a.get("terms", []), b.get("terms", [])) >= floor


def writes_of(run: Run) -> dict[str, Any]:
    """A remember's answer in brief: what its model wrote (or, in a shadow run, would have
    written) — each value as kind=value, whatever the wording of the basis."""
    ids: list[str] = []
    for call in ToolCall.objects.filter(run=run, error=""):
        args = call.arguments or {}
        kind = str(args.get("kind", "")).strip().lower()
        if call.tool in ("write_value", "make_new_kind"):
            ids.append(f"{kind}={str(args.get('value', '')).strip().lower()}")
        elif call.tool == "promote_to_list":
            ids += [
                f"{kind}[]={str(i.get('value', '')).strip().lower()}"
                for i in args.get("items", [])
                if isinstance(i, dict)
            ]
    return brief(found=bool(ids), ids=ids)


@dataclass
class Misses:
    skill: str
    runs: int = 0
    rejected: list[str] = field(default_factory=list)  # run ids
    empty: list[str] = field(default_factory=list)
    costly: list[str] = field(default_factory=list)
    median_turns: float = 0.0
    since: str = ""

    @property
    def repeated(self) -> bool:
        least = settings.MISS_REPEAT
        return max(len(self.rejected), len(self.empty), len(self.costly)) >= least

    def reason(self) -> str:
        parts = []
        if len(self.rejected) >= settings.MISS_REPEAT:
            parts.append(f"{len(self.rejected)} of {self.runs} runs rejected")
        if len(self.empty) >= settings.MISS_REPEAT:
            parts.append(f"{len(self.empty)} of {self.runs} recalls found nothing")
        if len(self.costly) >= settings.MISS_REPEAT:
            parts.append(
                f"{len(self.costly)} of {self.runs} runs cost over "
                f"{settings.MISS_TURNS_FACTOR:g}× the median of {self.median_turns:g} turns"
            )
        return "; ".join(parts)


def misses(skill: str) -> Misses:
    """The skill's misses among the real runs of the last MISS_WINDOW_DAYS days that came after
    its last candidate was decided (a miss opens at most one candidate). Real runs are those
    that answered someone and the evolution's own writing runs, so evolve-skill misses too
    when the candidates it writes keep losing."""
    since = timezone.now() - timedelta(days=settings.MISS_WINDOW_DAYS)
    last = (
        SkillCandidate.objects.filter(skill=skill)
        .exclude(status="open")
        .order_by("-decided_at")
        .values_list("decided_at", flat=True)
        .first()
    )
    if last is not None and last > since:
        since = last
    runs = [
        r
        for r in Run.objects.judged_work()
        .filter(created_at__gte=since, status="done")
        .only("id", "verb", "skills", "verdict", "found", "model_turns")
        if skill in (r.skills or [])
    ]
    found = Misses(skill=skill, runs=len(runs), since=since.isoformat())
    if not runs:
        return found
    found.median_turns = statistics.median(r.model_turns for r in runs)
    for r in runs:
        if r.verdict == "reject":
            found.rejected.append(str(r.pk))
        if r.verb == "recall" and r.found is False:
            found.empty.append(str(r.pk))
        if len(runs) >= settings.MISS_REPEAT and r.model_turns > (
            found.median_turns * settings.MISS_TURNS_FACTOR
        ):
            found.costly.append(str(r.pk))
    return found


def due(eligible: int) -> bool:
    """Is the eligible-th request one of the declared share? Exact: floor(n·rate) steps."""
    rate = Fraction(str(settings.SHADOW_RATE))
    return (eligible * rate).__floor__() > ((eligible - 1) * rate).__floor__()


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 3) if values else 0.0


def figures(candidate: SkillCandidate) -> dict[str, Any]:
    """Both versions side by side over the candidate's cases: verdicts confirmed / rejected /
    pending, mean model turns and model seconds (done cases), and the cases' counts."""
    cases = list(candidate.cases.select_related("run", "shadow"))
    done = [c for c in cases if c.status == "done"]
    judged = [c for c in done if c.run.verdict in ("confirm", "reject")]
    active_won = sum(c.run.verdict == "confirm" for c in judged)
    candidate_won = sum((c.run.verdict == "confirm") == bool(c.agrees) for c in judged)

    def side(won: int, runs: list[Run]) -> dict[str, Any]:
        return {
            "confirmed": won,
            "rejected": len(judged) - won,
            "pending": len(done) - len(judged),
            "turns": _mean([r.model_turns for r in runs]),
            "seconds": _mean([r.model_seconds for r in runs]),
        }

    return {
        "cases": len(cases),
        "done": len(done),
        "failed": sum(c.status == "failed" for c in cases),
        "judged": len(judged),
        "agreed": sum(bool(c.agrees) for c in done),
        "active": side(active_won, [c.run for c in done]),
        "candidate": side(candidate_won, [c.shadow for c in done]),
    }


def judged_enough(numbers: dict[str, Any]) -> bool:
    """Are there the PROMOTE_MIN judged cases a decision on verdicts needs?"""
    return numbers.get("judged", 0) >= settings.PROMOTE_MIN


def verdict_of(numbers: dict[str, Any]) -> tuple[bool, str]:
    """Does the candidate win? (won, why) — by verdicts with the margin, at no higher cost."""
    judged = numbers["judged"]
    active, candidate = numbers["active"], numbers["candidate"]
    if not judged_enough(numbers):
        return False, (
            f"too few verdicts: {judged} judged of {numbers['done']} shadow cases "
            f"(promotion needs {settings.PROMOTE_MIN})"
        )
    margin = (candidate["confirmed"] - active["confirmed"]) / judged
    score = (
        f"confirmed {candidate['confirmed']} of {judged} against the active version's "
        f"{active['confirmed']} (margin {margin:+.2f}, needs {settings.PROMOTE_MARGIN:+.2f})"
    )
    if margin < settings.PROMOTE_MARGIN:
        return False, f"did not win on verdicts: {score}"
    turns_bound = active["turns"] * (1 + settings.PROMOTE_TURNS_TOLERANCE)
    if candidate["turns"] > turns_bound:
        return False, (
            f"won on verdicts ({score}) but costs more: {candidate['turns']} model turns a case "
            f"against {active['turns']}"
        )
    seconds_bound = active["seconds"] * (1 + settings.PROMOTE_SECONDS_TOLERANCE)
    if candidate["seconds"] > seconds_bound:
        return False, (
            f"won on verdicts ({score}) but costs more: {candidate['seconds']} model seconds a "
            f"case against {active['seconds']}"
        )
    return True, (
        f"won on verdicts: {score}; cost {candidate['turns']} turns and "
        f"{candidate['seconds']} s a case against {active['turns']} and {active['seconds']}"
    )


def fate_verdict(candidate: SkillCandidate) -> str | None:
    """The verdict a decided candidate's fate gives the run whose model wrote it. Promoted: it
    won on outside verdicts at no higher cost — confirm. Killed by staff, or deleted after
    losing on enough judged cases (on verdicts or on cost) — reject. Deleted with too few
    verdicts, replaced by a newer text, or still open — none: nobody judged that text."""
    if candidate.status == "promoted":
        return "confirm"
    if candidate.status == "killed":
        return "reject"
    if candidate.status == "deleted" and judged_enough(candidate.figures or {}):
        return "reject"
    return None


def writer_verdict(written: Iterable[SkillCandidate]) -> tuple[str, str] | None:
    """The verdict on a run that wrote these candidates, and its note (which fates gave it):
    confirm when one of them was promoted, reject when none was and one lost, else none."""
    fates = [(fate_verdict(c), c) for c in written]
    for value in ("confirm", "reject"):
        decided = [c for fate, c in fates if fate == value]
        if decided:
            note = "; ".join(
                f"its candidate {c.version} of {c.skill} was {c.status}: {c.decided_why}"
                for c in decided
            )
            return value, note[:4000]
    return None
