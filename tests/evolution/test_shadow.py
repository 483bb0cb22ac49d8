"""Skills evolve by outside verdicts: a candidate beside the active version is replayed in the
shadow on real requests, and promoted or deleted by verdicts and cost (PASSPORT.md «Эволюция
навыков»). The fake `claude` answers by the skill version in its system prompt; everything else
is real: the ladder, the MCP server and its tools, Celery (eager), the skills repository."""

from __future__ import annotations

import json

import pytest

from memory.agent import skills_repo
from memory.models import Run, ShadowCase, SkillCandidate, Thread, ToolCall
from memory.services.evolution import candidates, measure
from tests.services.test_model_cycle import PARSE, TEAM, WRITE_TEAM

pytestmark = [pytest.mark.usefixtures("grown"), pytest.mark.slow]

QUESTION = "Кто отвечает за продукт?"
MARKER = "ВЕРСИЯ-КАНДИДАТ"
CANDIDATE_SAYS = "По версии кандидата за продукт отвечает Дима"


def _answer(found: bool, text: str) -> str:
    return json.dumps({"found": found, "kind": "probabilistic", "text": text}, ensure_ascii=False)


ACTIVE_LEVEL2 = {  # the active version: one read, then an answer (2 turns)
    "match": f"Вопрос: «{QUESTION}",
    "tools": [{"name": "read_table", "arguments": {"table": "команда"}}],
    "result": _answer(True, "За продукт отвечает Юля: она продакт-менеджер."),
}


def candidate_level2(reads: int) -> dict:
    return {
        "match": f"Вопрос: «{QUESTION}",
        "system_match": MARKER,
        "tools": [{"name": "read_table", "arguments": {"table": "команда"}}] * reads,
        "result": _answer(True, CANDIDATE_SAYS),
    }


@pytest.fixture
def evolving(fake_claude, alice_api, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # the shadow job runs as Celery's eager mode runs it
    settings.SHADOW_RATE = 1.0
    settings.SHADOW_DAILY_TURNS = 1000
    settings.PROMOTE_MARGIN = 0.1
    fake_claude.script([PARSE, WRITE_TEAM])
    alice_api.remember(TEAM)
    return fake_claude


def _open_candidate(author: str = "staff:keeper") -> SkillCandidate:
    body = skills_repo.active()["use-tables"].body + f"\n\n{MARKER}: сначала подумай, потом читай."
    return candidates.write_candidate("use-tables", body=body, reason="3 rejects", author=author)


def _ask(api) -> dict:
    answer = api.recall(QUESTION)
    assert answer["depth_used"] == 2 and "Юля" in answer["answer"]["text"]
    return answer


def _reject(api, run_id: str) -> dict:
    # Level 1 answers this one (the team's note), so no model runs for the verdict's carrier.
    return api.recall(
        "команда Юля Дима продакт-менеджер",
        verdict={"run": run_id, "value": "reject", "note": "не Юля"},
    )


def test_a_candidate_that_wins_on_verdicts_and_cost_is_promoted_in_one_commit(
    evolving, alice_api, settings
):
    settings.PROMOTE_MIN, settings.CANDIDATE_MAX_CASES = 2, 4
    evolving.script([PARSE, WRITE_TEAM, candidate_level2(reads=0), ACTIVE_LEVEL2])
    candidate = _open_candidate()
    answers = [_ask(alice_api), _ask(alice_api)]
    cases = list(ShadowCase.objects.order_by("pk"))
    assert [(c.status, c.agrees) for c in cases] == [("done", False), ("done", False)]
    for case, answer in zip(cases, answers, strict=True):
        assert str(case.run_id) == answer["run"]
        shadow = case.shadow
        assert (shadow.channel, shadow.verb, shadow.skills) == ("shadow", "recall", ["use-tables"])
        assert (shadow.model_turns, case.run.model_turns) == (1, 2)  # side by side, linked
        assert shadow.model_seconds > 0 and case.run.model_seconds > 0
    assert candidates.evaluate(candidate) == "open"  # no verdict yet: incomplete, never a win

    _reject(alice_api, answers[0]["run"])
    assert SkillCandidate.objects.get(pk=candidate.pk).status == "open"  # 1 judged of 2 needed
    commits_before = len(skills_repo.history())
    _reject(alice_api, answers[1]["run"])

    candidate.refresh_from_db()
    assert candidate.status == "promoted", candidate.figures
    assert candidate.figures["active"]["confirmed"] == 0
    assert candidate.figures["candidate"]["confirmed"] == 2
    assert candidate.figures["candidate"]["turns"] == 1.0
    assert candidate.figures["active"]["turns"] == 2.0
    assert MARKER in skills_repo.active()["use-tables"].body
    assert skills_repo.candidate("use-tables") is None
    history = skills_repo.history("use-tables")
    assert len(skills_repo.history()) == commits_before + 1  # the promotion is one commit
    assert "promoted to active — won on verdicts" in history[0].message
    assert history[0].sha == candidate.decided_commit[:12]


def test_a_candidate_that_wins_on_verdicts_but_costs_more_is_deleted_with_the_reason(
    evolving, alice_api, settings
):
    settings.PROMOTE_MIN, settings.CANDIDATE_MAX_CASES = 1, 2
    evolving.script([PARSE, WRITE_TEAM, candidate_level2(reads=2), ACTIVE_LEVEL2])
    candidate = _open_candidate()
    first = _ask(alice_api)
    _reject(alice_api, first["run"])
    assert SkillCandidate.objects.get(pk=candidate.pk).status == "open"  # wins, costs more
    _ask(alice_api)

    candidate.refresh_from_db()
    assert candidate.status == "deleted"
    assert "won on verdicts" in candidate.decided_why
    assert "costs more: 3.0 model turns a case against 2.0" in candidate.decided_why
    assert skills_repo.candidate("use-tables") is None
    assert MARKER not in skills_repo.active()["use-tables"].body
    assert skills_repo.history("use-tables")[0].message.endswith(candidate.decided_why)


def test_a_candidate_with_too_few_verdicts_stays_a_candidate(evolving, alice_api, settings):
    settings.PROMOTE_MIN, settings.CANDIDATE_MAX_CASES = 3, 10
    evolving.script([PARSE, WRITE_TEAM, candidate_level2(reads=0), ACTIVE_LEVEL2])
    candidate = _open_candidate()
    first = _ask(alice_api)
    _ask(alice_api)
    _reject(alice_api, first["run"])
    assert candidates.evaluate(candidate) == "open"
    numbers = measure.figures(candidate)
    assert (numbers["judged"], numbers["active"]["pending"]) == (1, 1)
    assert measure.verdict_of(numbers) == (
        False,
        "too few verdicts: 1 judged of 2 shadow cases (promotion needs 3)",
    )
    assert skills_repo.candidate("use-tables") is not None


def test_shadow_answers_never_appear_in_any_response(evolving, alice_api, settings, client):
    settings.PROMOTE_MIN, settings.CANDIDATE_MAX_CASES = 50, 100
    evolving.script([PARSE, WRITE_TEAM, candidate_level2(reads=0), ACTIVE_LEVEL2])
    _open_candidate()
    answers = [_ask(alice_api), alice_api.recall(QUESTION, trace=True)]
    assert ShadowCase.objects.filter(status="done").count() == 2
    (shadow,) = {c.shadow for c in ShadowCase.objects.all()[:1]}
    # The shadow's answer went nowhere: not in the answers, not kept on its run or its case.
    for answer in answers:
        assert CANDIDATE_SAYS not in json.dumps(answer, ensure_ascii=False)
        assert answer["thread"] != ""  # the real conversation is given, the shadow's is not
    assert "Дима" not in json.dumps(
        list(ShadowCase.objects.values()), default=str, ensure_ascii=False
    )
    assert CANDIDATE_SAYS not in json.dumps(
        list(Run.objects.filter(channel="shadow").values()), default=str, ensure_ascii=False
    )
    # Its conversation is nobody's to continue, and its run is nobody's to name.
    shadow_threads = {
        p.stem for p in evolving.home.glob("projects/*/*.jsonl") if MARKER in p.read_text()
    }
    assert shadow_threads and not Thread.objects.filter(pk__in=shadow_threads).exists()
    for thread in shadow_threads:
        body = alice_api.call("remember", expect=404, text="дальше", thread=thread)
        assert body["error"]["code"] == "thread_not_found"
    import uuid

    def naming(run_id: str) -> dict:
        return alice_api.recall(
            "х", previous_results=[run_id], verdict={"run": run_id, "value": "confirm"}
        )

    named, unknown = naming(str(shadow.pk)), naming(str(uuid.uuid4()))
    assert named["params"]["verdict"]["fate"] == "bad_form"
    assert "нет прогона" in named["params"]["verdict"]["note"]  # as if it never was
    assert named["params"]["previous_results"]["note"].replace(str(shadow.pk), "?") == (
        unknown["params"]["previous_results"]["note"].replace(
            unknown["params"]["verdict"]["note"].split()[-1], "?"
        )
    )
    assert CANDIDATE_SAYS not in json.dumps(named, ensure_ascii=False)
    # Nor on any page: the stand, the skills page, the admin's runs and shadow cases.
    from django.test import Client

    from memory.models import User

    keeper = User.objects.create_user("keeper", password="k", is_staff=True, is_superuser=True)
    pages = Client()
    pages.force_login(keeper)
    for url in (
        "/ru/settings",
        "/ru/settings/skills",
        "/admin/memory/run/",
        f"/admin/memory/run/{shadow.pk}/change/",
        "/admin/memory/shadowcase/",
        f"/admin/memory/shadowcase/{shadow.shadow_case.pk}/change/",
    ):
        response = pages.get(url)
        assert response.status_code == 200, url
        assert CANDIDATE_SAYS not in response.content.decode(), url
    # The shadow's write tools would have written nothing either (checked in the tools' test).
    assert not ToolCall.objects.filter(run=shadow).exclude(tool="read_table").exists()


def test_a_remember_is_replayed_and_its_candidate_writes_nothing(evolving, alice_api, settings):
    from memory.models import ShapeEntry

    settings.PROMOTE_MIN, settings.CANDIDATE_MAX_CASES = 50, 100
    phrase = "У меня есть друг Миша"
    evolving.script(
        [
            PARSE,
            {
                "match": "Запомни.*Миша",
                "system_match": MARKER,
                "tools": [
                    {"name": "make_new_kind", "arguments": {"kind": "друг", "value": "Миша"}}
                ],
                "result": "Записал.",
            },
            {
                "match": "Запомни.*Миша",
                "tools": [
                    {
                        "name": "promote_to_list",
                        "arguments": {"kind": "друзья", "items": [{"value": "Миша"}]},
                    }
                ],
                "result": "Записал.",
            },
        ]
    )
    _open_candidate()
    entries_before = ShapeEntry.objects.count()
    answer = alice_api.remember(phrase)
    (case,) = ShadowCase.objects.all()
    assert str(case.run_id) == answer["run"] and case.status == "done"
    assert case.real_answer["ids"] == ["друзья[]=миша"]
    assert case.agrees is False  # it would have written «друг» = Миша, as a single value
    (call,) = ToolCall.objects.filter(run=case.shadow)
    # Compared, then forgotten: the fact of the call stays, what it would have written does not.
    assert (call.tool, call.error, call.arguments, call.result) == ("make_new_kind", "", {}, None)
    # The real remember grew the list «друзья»; the shadow's single value «друг» is nowhere.
    assert not ShapeEntry.objects.filter(name="drug").exists()
    assert ShapeEntry.objects.count() > entries_before
    assert case.shadow.model_turns == 3 and case.run.model_turns == 3  # parse + turn + tool
    assert CANDIDATE_SAYS not in json.dumps(answer, ensure_ascii=False)


def test_a_research_is_replayed_with_a_deep_analysis_candidate(
    fake_claude, alice, client_for, settings
):
    from memory.models import Research, Summary
    from tests.levels import test_research as research

    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.SHADOW_RATE, settings.SHADOW_DAILY_TURNS = 1.0, 1000
    settings.PROMOTE_MIN, settings.CANDIDATE_MAX_CASES = 50, 100
    friends = research.tell_friends(alice, client_for, settings)
    body = skills_repo.active()["deep-analysis"].body + f"\n\n{MARKER}: ищи осторожнее."
    candidates.write_candidate("deep-analysis", body=body, reason="r", author="staff:k")
    fake_claude.script(
        [
            {
                "match": "Неизвестное слово",
                "system_match": MARKER,
                "result": json.dumps(
                    {"terms": ["Марс"], "found": False, "text": "", "basis": []},
                    ensure_ascii=False,
                ),
            },
            research._model_concludes(research.DENIS),
            research.LEVEL2_EMPTY,
        ]
    )
    answer = friends.recall(research.QUESTION, depth="extreme", wait=True)
    assert answer["answer"]["found"] is True and answer["depth_used"] == 5
    cases = {c.candidate.skill: c for c in ShadowCase.objects.select_related("candidate")}
    case = cases["deep-analysis"]
    assert case.status == "done" and str(case.run_id) == answer["run"]
    assert case.real_answer["found"] is True and case.agrees is False
    assert case.shadow.skills == ["deep-analysis"] and case.shadow.model_turns == 1
    assert case.run.model_turns >= 2  # the job's model calls reached the recall's run
    assert Research.objects.count() == 1  # the replay opened no job
    assert Summary.objects.count() == 1  # and relearned nothing
