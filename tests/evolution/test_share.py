"""The shadow test's price is declared as numbers: the share of real requests replayed
(SHADOW_RATE, exact) and a daily cap on model turns (SHADOW_DAILY_TURNS) — counted here over
1,000 simulated requests. And what decides: the agreement rule and the verdict's arithmetic."""

from __future__ import annotations

import json

import pytest

from memory.agent import tools
from memory.models import Run, ShadowCase, ShapeEntry, SkillCandidate
from memory.services.evolution import candidates, measure, shadow, share

NOTHING = measure.brief(found=False)


def _requests(architect, n: int, *, skills=("use-tables",), turns: int = 2) -> list[Run]:
    return Run.objects.bulk_create(
        Run(
            architect=architect,
            verb="recall",
            text=f"вопрос {i}",
            caller="t",
            channel="api",
            status="done",
            skills=list(skills),
            model_turns=turns,
        )
        for i in range(n)
    )


def _candidate(skill: str = "use-tables") -> SkillCandidate:
    return candidates.write_candidate(skill, body="Вторая версия.", reason="test", author="staff:t")


@pytest.mark.django_db
def test_the_declared_share_of_1000_requests_is_replayed_exactly(alice, settings):
    settings.SHADOW_RATE, settings.SHADOW_DAILY_TURNS = 0.1, 1_000_000
    candidate = _candidate()
    runs = _requests(alice, 1000)
    others = _requests(alice, 300, skills=("naming",))  # another skill: not counted
    offered = [
        bool(share.offer(r, request={"text": r.text}, answer=NOTHING)) for r in runs + others
    ]
    assert sum(offered) == 100
    assert [i for i, hit in enumerate(offered) if hit] == list(range(9, 1000, 10))  # evenly
    candidate.refresh_from_db()
    assert candidate.eligible == 1000
    assert share.turns_today() == 200  # 100 cases queued at 2 turns each


@pytest.mark.django_db
def test_the_daily_cap_on_model_turns_holds_over_1000_requests(alice, settings):
    settings.SHADOW_RATE, settings.SHADOW_DAILY_TURNS = 0.5, 150
    _candidate()
    runs = _requests(alice, 1000, turns=3)
    cases = [c for r in runs for c in share.offer(r, request={"text": r.text}, answer=NOTHING)]
    assert len(cases) == 50  # 500 were due; 50 × 3 turns fill the day's 150
    assert share.turns_today() == 150
    # A case that ends cheaper than estimated gives the rest back to the day.
    Run.objects.filter(pk=cases[0].shadow_id).update(status="done", model_turns=1)
    ShadowCase.objects.filter(pk=cases[0].pk).update(status="done")
    assert share.turns_today() == 148
    assert len(share.offer(_requests(alice, 2, turns=2)[1], request={}, answer=NOTHING)) == 0
    assert len(share.offer(_requests(alice, 1, turns=2)[0], request={}, answer=NOTHING)) == 1
    assert share.turns_today() == 150


@pytest.mark.django_db
def test_no_candidate_no_share_no_conversation(alice, settings):
    settings.SHADOW_RATE = 1.0
    (run,) = _requests(alice, 1)
    assert share.offer(run, request={"text": "x"}, answer=NOTHING) == []  # no candidate
    _candidate()
    assert share.offer(run, request={"text": "x", "thread": "t-1"}, answer=NOTHING) == []
    settings.SHADOW_RATE = 0.0
    assert share.offer(run, request={"text": "x"}, answer=NOTHING) == []
    shadow = Run.objects.create(architect=alice, verb="recall", caller="t", channel="shadow")
    shadow.skills = ["use-tables"]
    settings.SHADOW_RATE = 1.0
    assert share.offer(shadow, request={"text": "x"}, answer=NOTHING) == []  # never itself


@pytest.mark.django_db
def test_a_broker_that_is_down_fails_the_case_not_the_answer(alice, settings, monkeypatch):
    from memory.celery import app

    settings.SHADOW_RATE = 1.0
    _candidate()
    (run,) = _requests(alice, 1)
    (case,) = share.offer(run, request={"text": "x"}, answer=NOTHING)

    def down(*args, **kwargs):
        raise ConnectionRefusedError("broker down")

    monkeypatch.setattr(app, "send_task", down)
    share.send(case.pk)
    case.refresh_from_db()
    assert (case.status, case.error) == ("failed", "not sent: broker down")
    assert Run.objects.get(pk=case.shadow_id).status == "failed"


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ({"found": False}, {"found": False}, True),
        ({"found": True, "ids": ["notes:1"]}, {"found": False}, False),
        ({"found": True, "ids": ["notes:1", "notes:2"]}, {"found": True, "ids": ["notes:2"]}, True),
        (
            {"found": True, "ids": ["notes:1", "notes:2", "notes:3"]},
            {"found": True, "ids": ["notes:3"]},
            False,
        ),
        (
            {"found": True, "ids": [], "terms": ["юля", "продукт"]},
            {"found": True, "terms": ["юля", "продукт", "отвечать"]},
            True,
        ),
        ({"found": True, "terms": ["юля"]}, {"found": True, "terms": ["дима"]}, False),
    ],
)
def test_two_answers_agree_on_what_they_rest_on(a, b, same, settings):
    settings.SHADOW_AGREE_MIN = 0.5
    assert measure.agree(a, b) is same
    assert measure.agree(b, a) is same


def _numbers(judged: int, active: int, candidate: int, turns=(2.0, 2.0), seconds=(1.0, 1.0)):
    return {
        "done": judged,
        "judged": judged,
        "active": {"confirmed": active, "turns": turns[0], "seconds": seconds[0]},
        "candidate": {"confirmed": candidate, "turns": turns[1], "seconds": seconds[1]},
    }


def test_the_verdict_arithmetic(settings):
    settings.PROMOTE_MIN, settings.PROMOTE_MARGIN = 20, 0.1
    settings.PROMOTE_TURNS_TOLERANCE, settings.PROMOTE_SECONDS_TOLERANCE = 0.0, 0.2
    assert measure.verdict_of(_numbers(19, 0, 19))[0] is False  # too few verdicts
    assert measure.verdict_of(_numbers(20, 10, 12))[0] is True  # +2 of 20 = the margin
    assert measure.verdict_of(_numbers(20, 10, 11))[0] is False  # +1 of 20: not enough
    assert measure.verdict_of(_numbers(20, 10, 20, turns=(2.0, 2.1)))[0] is False
    assert measure.verdict_of(_numbers(20, 10, 20, seconds=(1.0, 1.19)))[0] is True
    assert measure.verdict_of(_numbers(20, 10, 20, seconds=(1.0, 1.21)))[0] is False


@pytest.mark.django_db
def test_a_shadow_runs_write_tools_write_nothing_and_record_what_they_would(alice, grown):
    from memory.shape import selectors

    shadow = Run.objects.create(architect=alice, verb="remember", caller="t", channel="shadow")
    with tools.bound(tools.Tenant(architect=alice, run=shadow)):
        out = tools.call("promote_to_list", {"kind": "друзья", "items": [{"value": "Дима"}]})
        assert out == tools.SHADOW_WRITE
        with pytest.raises(tools.ToolRefused):  # its arguments are checked as for a real call
            tools.call("write_value", {"value": "x"})
    assert "друзья" not in json.dumps(selectors.catalog_summary(alice), ensure_ascii=False)
    assert not ShapeEntry.objects.filter(architect=alice).exists()  # the shape did not grow
    assert measure.writes_of(shadow) == measure.brief(found=True, ids=["друзья[]=дима"])


def test_a_replay_does_not_see_what_was_learned_since_the_request(alice):
    from memory.levels.context import RecallContext

    ctx = RecallContext.of(architect=alice, text="q", scope=[], lang="ru")
    ctx.unseen = frozenset({"summaries:s-1"})
    assert ctx.excluded("summaries:s-1") and ctx.excluded({"id": "summaries:s-1"})
    assert not ctx.excluded("summaries:s-2") and not ctx.excluded({"note": "n-1"})


@pytest.mark.django_db
def test_a_case_no_worker_finished_stops_holding_the_days_turns(alice, settings):
    from datetime import timedelta

    from django.utils import timezone

    settings.SHADOW_RATE, settings.RUN_STALE_SECONDS = 1.0, 3600
    _candidate()
    (run,) = _requests(alice, 1, turns=4)
    (case,) = share.offer(run, request={"text": "x"}, answer=NOTHING)
    assert share.turns_today() == 4
    assert shadow.watch()["abandoned"] == 0  # young: a worker may still take it
    ShadowCase.objects.filter(pk=case.pk).update(created_at=timezone.now() - timedelta(hours=2))
    Run.objects.filter(pk=case.shadow_id).update(created_at=timezone.now() - timedelta(hours=2))
    assert shadow.watch()["abandoned"] == 1
    case.refresh_from_db()
    assert case.status == "failed" and "no worker" in case.error
    assert share.turns_today() == 0
