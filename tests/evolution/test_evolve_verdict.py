"""The memory's evolution run — the model writing a candidate by evolve-skill — gets its verdict
from the fate of the candidate it wrote (PASSPORT.md §17): promoted → confirm; killed by staff, or
deleted after losing on enough judged cases → reject; deleted with too few verdicts, or replaced
by a newer text → none. The verdict is written where every verdict is (``runs.verdict_record``)
and read as every verdict is (``candidates.verdict_given`` → the Celery job → ``evaluate``), so a
candidate of evolve-skill, which is replayed on those runs, reaches PROMOTE_MIN judged cases and
is promoted by the one rule.

On main the first two failed: nothing linked a candidate to the run that wrote it
(``SkillCandidate.writer``), and no decision wrote a verdict on that run, so an evolve-skill
candidate's cases were never judged. The third holds the other side: a fate nobody judged writes
no verdict."""

from __future__ import annotations

import pytest

from memory.agent import skills_repo
from memory.models import Run, ShadowCase, SkillCandidate
from memory.services.evolution import candidates, measure, shadow
from tests.evolution.cases import judged_cases

MARKER = "ВЕРСИЯ-КАНДИДАТ"


def _evolve_skill_candidate() -> SkillCandidate:
    body = skills_repo.active()["evolve-skill"].body + f"\n\n{MARKER}: правь одну строку."
    return candidates.write_candidate("evolve-skill", body=body, reason="r", author="staff:k")


@pytest.mark.slow
@pytest.mark.parametrize("fate", ["promoted", "deleted"])
def test_the_evolve_run_gets_its_verdict_when_the_candidate_it_wrote_is_decided(
    grown, fake_claude, alice, settings, fate
):
    """The whole way: the watch asks the model, its write_candidate (through the MCP server)
    opens a candidate linked to the run; an evolve-skill candidate replays that run; the written
    candidate is decided by ``evaluate`` — and the run's verdict follows, which the evolve-skill
    candidate's figures then read as a judged case."""
    from tests.evolution.test_misses import _runs

    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.SHADOW_RATE, settings.SHADOW_DAILY_TURNS = 1.0, 1000
    settings.PROMOTE_MIN, settings.PROMOTE_MARGIN, settings.CANDIDATE_MAX_CASES = 3, 0.1, 3
    settings.MISS_REPEAT = 3
    _runs(alice, 3, verdict="reject", verdict_note="не тот человек", model_turns=1)
    evolving = _evolve_skill_candidate()
    args = {"skill": "use-tables", "body": "Сначала каталог, потом таблица.", "reason": "rejects"}
    fake_claude.script(
        [{"match": "«use-tables»", "tools": [{"name": "write_candidate", "arguments": args}],
          "result": "ok"}]
    )  # fmt: skip
    assert shadow.watch()["written"] == ["use-tables"]
    writer = Run.objects.get(verb="evolve", shadow_case__isnull=True)
    written = SkillCandidate.objects.get(skill="use-tables")
    assert written.writer_id == writer.pk  # the tool's run is the candidate's writer
    (case,) = ShadowCase.objects.filter(candidate=evolving, status="done")
    assert case.run_id == writer.pk and writer.verdict == ""
    assert measure.figures(evolving)["judged"] == 0  # a case with no verdict: incomplete

    # Real runs judge the written candidate: it wins (the real answers were rejected and it
    # said otherwise), or it loses (it said the same) and, at CANDIDATE_MAX_CASES, is deleted.
    judged_cases(written, alice, 3, verdict="reject", agrees=fate == "deleted")
    assert candidates.evaluate(written) == fate

    writer.refresh_from_db()
    assert writer.verdict == ("confirm" if fate == "promoted" else "reject")
    assert writer.verdict_note.startswith(
        f"its candidate {written.version} of use-tables was {fate}"
    )
    assert writer.verdict_at is not None and writer.verdict_run is None  # no run gave it
    # The evolve-skill candidate's case is judged now, and it was decided again by the same
    # evaluate (after the verdict committed, on Celery): one judged case is too few to decide.
    numbers = measure.figures(evolving)
    assert numbers["judged"] == 1
    assert numbers["active"]["confirmed"] == (1 if fate == "promoted" else 0)
    evolving.refresh_from_db()
    assert evolving.status == "open"
    # The writer stays out of an asker's reach: a shadow-channel run takes no verdict by id.
    assert not Run.objects.asked().filter(pk=writer.pk).exists()


@pytest.mark.django_db
def test_an_evolve_skill_candidate_with_enough_verdicts_is_promoted_by_evaluate(
    alice, settings, django_capture_on_commit_callbacks
):
    """Three evolution runs, replayed with an evolve-skill candidate; each wrote a candidate of
    its own, and each of those is decided — promoted, killed by staff, deleted after losing. The
    third decision's verdict brings the evolve-skill candidate to PROMOTE_MIN judged cases, and
    the job that reads a verdict promotes it: the same rule, no second one."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.PROMOTE_MIN, settings.PROMOTE_MARGIN, settings.CANDIDATE_MAX_CASES = 3, 0.1, 3
    evolving = _evolve_skill_candidate()

    def evolution_run(agrees: bool) -> Run:
        """An evolution run and its replay with the evolve-skill candidate, at the same cost."""
        facts = {"architect": alice, "verb": "evolve", "caller": "memory", "channel": "shadow",
                 "status": "done", "model_turns": 1, "model_seconds": 2.0,
                 "skills": ["evolve-skill"]}  # fmt: skip
        writer, twin = Run.objects.create(**facts), Run.objects.create(**facts)
        ShadowCase.objects.create(
            candidate=evolving, run=writer, shadow=twin, status="done", agrees=agrees
        )
        return writer

    def write(skill: str, writer: Run) -> SkillCandidate:
        body = skills_repo.active()[skill].body + "\n\nЕщё строка."
        return candidates.write_candidate(
            skill, body=body, reason="a miss", author="model", writer=writer
        )

    # 1. Its candidate wins and is promoted: confirm; the replay wrote the same — confirmed too.
    first = evolution_run(agrees=True)
    won = write("use-tables", first)
    judged_cases(won, alice, 3, verdict="reject", agrees=False)
    with django_capture_on_commit_callbacks(execute=True):
        assert candidates.evaluate(won) == "promoted"
    # 2. Staff kill its candidate: reject; the replay wrote something else — confirmed.
    second = evolution_run(agrees=False)
    write("naming", second)
    with django_capture_on_commit_callbacks(execute=True):
        candidates.kill("naming", reason="пишет не о том", author="staff:k")
    evolving.refresh_from_db()
    assert evolving.status == "open"  # two judged cases: too few
    # 3. Its candidate loses on enough verdicts and is deleted: reject; the replay differed.
    third = evolution_run(agrees=False)
    lost = write("use-objects", third)
    judged_cases(lost, alice, 3, verdict="reject", agrees=True)
    with django_capture_on_commit_callbacks(execute=True):
        assert candidates.evaluate(lost) == "deleted"

    verdicts = [Run.objects.get(pk=r.pk).verdict for r in (first, second, third)]
    assert verdicts == ["confirm", "reject", "reject"]
    assert "killed by staff:k: пишет не о том" in Run.objects.get(pk=second.pk).verdict_note
    evolving.refresh_from_db()
    assert evolving.status == "promoted", evolving.decided_why
    assert evolving.figures["judged"] == 3
    assert (
        evolving.figures["candidate"]["confirmed"],
        evolving.figures["active"]["confirmed"],
    ) == (
        3,
        1,
    )
    assert skills_repo.active()["evolve-skill"].body.endswith(f"{MARKER}: правь одну строку.")
    assert "promoted to active — won on verdicts" in skills_repo.history("evolve-skill")[0].message


@pytest.mark.django_db
def test_no_verdict_when_nobody_judged_the_text(alice, settings):
    """A candidate replaced by a newer text, or deleted with too few verdicts, says nothing
    about the run that wrote it; nor does a candidate no evolution run wrote touch any run."""
    settings.PROMOTE_MIN, settings.CANDIDATE_MAX_CASES = 3, 2
    facts = {"architect": alice, "verb": "evolve", "caller": "memory", "channel": "shadow",
             "status": "done"}  # fmt: skip
    replaced_by, unjudged_by = Run.objects.create(**facts), Run.objects.create(**facts)
    body = skills_repo.active()["use-tables"].body
    old = candidates.write_candidate(
        "use-tables", body=f"{body}\n\nА.", reason="r", author="model", writer=replaced_by
    )
    newer = candidates.write_candidate(
        "use-tables", body=f"{body}\n\nБ.", reason="r", author="model", writer=unjudged_by
    )
    old.refresh_from_db()
    assert old.status == "replaced"
    judged_cases(newer, alice, 2, verdict="", agrees=True)  # replayed, never judged
    assert candidates.evaluate(newer) == "deleted"
    assert "too few verdicts" in SkillCandidate.objects.get(pk=newer.pk).decided_why
    assert [Run.objects.get(pk=r.pk).verdict for r in (replaced_by, unjudged_by)] == ["", ""]
    staff = candidates.write_candidate("naming", body="Текст.", reason="r", author="staff:k")
    candidates.kill("naming", reason="r", author="staff:k")
    assert SkillCandidate.objects.get(pk=staff.pk).writer is None
    assert not Run.objects.exclude(verdict="").exists()


@pytest.mark.django_db
def test_evolution_runs_whose_candidates_lost_are_misses_of_evolve_skill(alice, settings):
    """The writing runs carry evolve-skill and get their verdicts from their candidates' fates;
    when MISS_REPEAT of them were rejected, evolve-skill has a repeated miss (and the watch may
    ask for a candidate of it). A replay of such a run is no miss: it answered nobody. On main
    ``misses`` read only the runs that answered someone, and the writing runs are on the shadow
    channel, so evolve-skill never missed."""
    from memory.models.runs import EVOLVE, SHADOW

    settings.MISS_REPEAT = 2

    def writing_run(verdict: str) -> Run:
        return Run.objects.create(
            architect=alice, verb=EVOLVE, text="write a candidate for use-tables", caller="memory",
            channel=SHADOW, status="done", skills=[shadow.EVOLVE_SKILL], verdict=verdict,
        )  # fmt: skip

    lost = [writing_run("reject"), writing_run("reject")]
    won = writing_run("confirm")
    candidate = SkillCandidate.objects.create(
        skill=shadow.EVOLVE_SKILL, version="v", active_version="a", opened_by="staff:t"
    )
    replay = writing_run("reject")  # a replay of the first: a shadow case points at it
    ShadowCase.objects.create(candidate=candidate, run=lost[0], shadow=replay, status="done")
    candidate.status = "deleted"  # decided long ago: the misses since then count
    candidate.save()
    SkillCandidate.objects.filter(pk=candidate.pk).update(decided_at="2000-01-01T00:00:00Z")

    seen = measure.misses(shadow.EVOLVE_SKILL)
    assert sorted(seen.rejected) == sorted(str(r.pk) for r in lost)
    assert str(won.pk) not in seen.rejected and str(replay.pk) not in seen.rejected
    assert seen.runs == 3 and seen.repeated
