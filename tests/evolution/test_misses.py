"""Misses are read from run facts, never from the model's account: rejects, recalls that found
nothing, runs far over the skill's median turns. A repeated miss opens a candidate — written by
the model through a tool that can write only candidate files — or waits for staff."""

from __future__ import annotations

import pytest

from memory.agent import skills_repo
from memory.models import Run, SkillCandidate, ToolCall
from memory.services.evolution import candidates, measure, shadow, share


def _runs(architect, n, **facts):
    defaults = {
        "verb": "recall",
        "status": "done",
        "skills": ["use-tables"],
        "found": True,
        "channel": "api",
    }
    return Run.objects.bulk_create(
        Run(architect=architect, text=f"q{i}", caller="t", **{**defaults, **facts})
        for i in range(n)
    )


@pytest.mark.django_db
def test_misses_are_counted_from_facts(alice, settings):
    settings.MISS_REPEAT, settings.MISS_TURNS_FACTOR = 3, 2.0
    _runs(alice, 6, model_turns=2)
    _runs(alice, 2, verdict="reject", model_turns=2)
    _runs(alice, 3, found=False, model_turns=2)
    _runs(alice, 3, model_turns=9)
    _runs(alice, 5, verdict="reject", channel="shadow")  # a shadow run is no real miss
    _runs(alice, 5, verdict="reject", skills=["naming"])  # another skill's
    seen = measure.misses("use-tables")
    assert (seen.runs, len(seen.rejected), len(seen.empty), len(seen.costly)) == (14, 2, 3, 3)
    assert seen.median_turns == 2 and seen.repeated
    assert seen.reason() == (
        "3 of 14 recalls found nothing; 3 of 14 runs cost over 2× the median of 2 turns"
    )
    assert measure.misses("naming").reason() == "5 of 5 runs rejected"


@pytest.mark.django_db
def test_without_a_model_a_repeated_miss_waits_for_staff(alice, settings):
    settings.MISS_REPEAT = 3
    _runs(alice, 3, verdict="reject", model_turns=1)
    report = shadow.watch()
    assert report["missed"] == {"use-tables": "3 of 3 runs rejected"}
    assert report["written"] == [] and not SkillCandidate.objects.exists()


@pytest.mark.django_db
def test_a_decided_candidate_is_not_reopened_by_the_misses_before_it(alice, settings):
    settings.MISS_REPEAT = 3
    _runs(alice, 3, verdict="reject")
    candidates.write_candidate("use-tables", body="B", reason="r", author="staff:t")
    candidates.kill("use-tables", reason="не то", author="staff:t")
    assert not measure.misses("use-tables").repeated  # counted again from the decision on
    assert SkillCandidate.objects.get().decided_why == "killed by staff:t: не то"


@pytest.mark.slow
def test_the_model_writes_the_candidate_through_its_one_tool(grown, fake_claude, alice, settings):
    settings.MISS_REPEAT = 3
    _runs(alice, 3, verdict="reject", verdict_note="не тот человек", model_turns=1)
    body = "# Таблицы памяти\n\nСначала read_catalog, потом read_table нужной таблицы."
    fake_claude.script(
        [
            {
                "match": "написать вторую версию навыка «use-tables»",
                "system_match": "Вторая версия навыка",
                "tools": [
                    {
                        "name": "write_candidate",
                        "arguments": {"skill": "use-tables", "body": body, "reason": "rejects"},
                    },
                    # Its one tool cannot reach the active version or the instruction:
                    {
                        "name": "write_candidate",
                        "arguments": {"skill": "MEMORY-AGENT.md", "body": "x", "reason": "x"},
                    },
                ],
                "result": "Записал кандидата.",
            }
        ]
    )
    instruction_before = skills_repo.instruction_path().read_text(encoding="utf-8")
    active_before = skills_repo.active()["use-tables"].body
    report = shadow.watch()
    assert report["written"] == ["use-tables"]
    candidate = SkillCandidate.objects.get(status="open")
    assert (candidate.skill, candidate.opened_by, candidate.opened_why) == (
        "use-tables",
        "model",
        "rejects",
    )
    assert skills_repo.candidate("use-tables").body == body
    assert skills_repo.active()["use-tables"].body == active_before
    assert skills_repo.instruction_path().read_text(encoding="utf-8") == instruction_before
    writer = Run.objects.get(verb="evolve")
    assert (writer.channel, writer.skills, writer.model_turns) == ("shadow", ["evolve-skill"], 3)
    calls = list(ToolCall.objects.filter(run=writer).order_by("pk"))
    assert [(c.tool, bool(c.error)) for c in calls] == [
        ("write_candidate", False),
        ("write_candidate", True),
    ]
    prompt = fake_claude.calls()[-1]["argv"]
    assert any("не тот человек" in part for part in prompt)  # the facts were given
    assert "candidate" in skills_repo.history("use-tables")[0].message
    assert share.turns_today() == 3  # the writer's turns count against the day's cap
