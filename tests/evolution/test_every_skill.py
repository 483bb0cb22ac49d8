"""Every skill a run can use is measured (the owner's passport §11, §14.4): each reaches a model
call the shadow replays — the graph's in level 2 (ask_graph is among its tools), the vectors' and
the graph's in the relearning cycle's summary of a level-4 or level-3 answer (those levels run no
model), the relearning cycle's in that summary, evolve-skill's in the candidate-writing turn. A
pattern the model works out while relearning opens a candidate; the model may propose a new skill
or instruction lines, measured and decided by the same rule (``candidates.evaluate``).

Before this change the tests below failed on main: ``REPLAYABLE`` held remember and recall only
(use-knowledge-graph, use-vectors, relearning-cycle and evolve-skill in none), level 2 was offered
ask_graph with no skill naming it, the relearning summary's schema had no pattern, and there was
neither ``propose_skill`` nor ``propose_instruction`` nor ``skills_repo.proposed``."""

from __future__ import annotations

import dataclasses
import json

import pytest

from memory.agent import instruction, skills_repo
from memory.agent import tools as agent_tools
from memory.levels import model as model_level
from memory.levels.research import SKILL as RESEARCH_SKILL
from memory.models import MemoryObject, Run, ShadowCase, SkillCandidate, Summary, ToolCall
from memory.services import relearning
from memory.services import remember as remember_service
from memory.services.evolution import candidates, measure, shadow, share
from tests.evolution.cases import judged_cases

MARKER = "ВЕРСИЯ-КАНДИДАТ"


@pytest.mark.django_db
def test_every_released_skill_is_read_by_a_call_the_shadow_replays():
    released = set(skills_repo.released())
    read = {name for names in share.REPLAYABLE.values() for name in names}
    assert released - read == set()  # on main: the graph's, the vectors', relearning, evolve
    assert set(share.REPLAYABLE) == set(shadow._REPLAY)  # each such call has its replay
    assert all(share.replayable(name) for name in released)
    assert share.replayable(skills_repo.INSTRUCTION_NAME)  # every call reads the instruction


@pytest.mark.django_db
def test_every_tool_a_call_is_offered_comes_with_a_skill_that_names_it():
    """A model given a tool is given the skill that says how to use it: that is also what makes
    the skill's candidate measurable in that call. On main level 2 had ask_graph bare."""
    skills = skills_repo.released()
    calls = {
        "remember": (remember_service.TOOLS, remember_service.SKILLS),
        "level 2": (model_level.TOOLS, model_level.SKILLS),
        "research": (agent_tools.RESEARCH_TOOLS, (RESEARCH_SKILL,)),
        "evolve": (agent_tools.EVOLVE_TOOLS, (shadow.EVOLVE_SKILL,)),
    }
    for call, (tools, names) in calls.items():
        for tool in tools:
            assert any(tool in skills[n].tools for n in names), (call, tool)


LEVEL_4 = relearning.Result(
    question="На каком инструменте занимается дочка?",
    level=4,
    kind="probabilistic",
    text="Дочь Вера учится играть на виолончели.",
    facts=[{"note": None, "text": "Моя дочь Вера учится играть на виолончели.", "said_at": None,
            "source": "notes", "id": "notes:1"}],
)  # fmt: skip
LESSON = "Ответ по смыслу про родных ищи и по словам «дочь», «сын»: они стоят в заметке."


def _summary_rule(summary: str, pattern: dict | None = None, system_match: str = "") -> dict:
    value = {"summary": summary, **({"pattern": pattern} if pattern else {})}
    rule = {
        "match": "Факты:",
        "system_match": system_match or "шаг 3 навыка relearning-cycle",
        "result": json.dumps(value, ensure_ascii=False),
    }
    return rule


@pytest.mark.slow
@pytest.mark.django_db
def test_a_level_4_summary_reads_the_vectors_skill_and_its_pattern_opens_a_candidate(
    fake_claude, bob, settings, django_capture_on_commit_callbacks
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    fake_claude.script(
        [_summary_rule("Дочь учится на виолончели.", {"skill": "use-vectors", "lesson": LESSON})]
    )
    run = Run.objects.create(architect=bob, verb="recall", text="x", caller="t", channel="api")
    active = skills_repo.active()["use-vectors"].body
    result = dataclasses.replace(LEVEL_4)
    with django_capture_on_commit_callbacks(execute=True):
        kept = relearning.relearn(result, architect=bob, run=run, lang="ru", mode="sync")
    assert kept["written_by"] == "model"
    system = fake_claude.calls()[-1]["argv"]
    assert any("## Навык use-vectors" in part for part in system)  # how a level-4 answer reads
    assert relearning.skills_for(4) == ("relearning-cycle", "use-vectors")
    # The pattern is a candidate of the skill it names, opened by the model, with where from.
    candidate = SkillCandidate.objects.get(status="open")
    assert (candidate.skill, candidate.opened_by) == ("use-vectors", "model")
    assert candidate.opened_why == f"a pattern of the relearning cycle of run {run.pk}: {LESSON}"
    assert skills_repo.candidate("use-vectors").body == f"{active}\n\n{LESSON}"
    assert skills_repo.active()["use-vectors"].body == active  # measured before it is kept
    assert "candidate" in skills_repo.history("use-vectors")[0].message

    # A second pattern never writes over a candidate being measured, nor names a skill that is not.
    assert candidates.from_pattern("use-vectors", "Другая строка.", run_id="r2") is None
    assert candidates.from_pattern("no-such-skill", "Строка.", run_id="r3") is None
    assert SkillCandidate.objects.get(status="open").pk == candidate.pk


@pytest.mark.slow
def test_the_relearning_summary_is_replayed_with_a_relearning_cycle_candidate(
    grown, fake_claude, alice, client_for, settings
):
    from memory.shape.tools import promote_to_list
    from tests.levels.test_relearning import COMPUTE, INCOME

    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.SHADOW_RATE, settings.SHADOW_DAILY_TURNS = 1.0, 1000
    settings.PROMOTE_MIN, settings.CANDIDATE_MAX_CASES = 50, 100
    for kind in ("доходы", "расходы"):
        promote_to_list(
            architect=alice,
            kind=kind,
            items=[{"value": "май", "fields": {"сумма": "5"}}],
            basis=kind,
        )
    body = skills_repo.active()["relearning-cycle"].body + f"\n\n{MARKER}: пиши одной фразой."
    candidate = candidates.write_candidate("relearning-cycle", body=body, reason="r", author="s:k")
    fake_claude.script(
        [
            _summary_rule("Кандидат: прибыль за лето посчитана.", system_match=MARKER),
            _summary_rule("В мае–августе заработали 1 300, по месяцам."),
            COMPUTE,
        ]
    )
    answer = client_for(alice).recall(INCOME)
    assert answer["relearned"]["written_by"] == "model" and answer["depth_used"] == 2
    run = Run.objects.get(pk=answer["run"])
    assert "relearning-cycle" in run.skills
    (case,) = ShadowCase.objects.filter(candidate=candidate)
    assert case.status == "done" and case.run_id == run.pk
    assert case.request["call"] == "relearning" and case.request["result"]["level"] == 2
    assert case.real_answer == measure.brief(
        found=True, text="В мае–августе заработали 1 300, по месяцам."
    )
    assert case.agrees is False  # the candidate's summary says other things
    assert (case.shadow.skills, case.shadow.model_turns) == (["relearning-cycle"], 1)
    # The replay kept nothing: one summary and one artifact, the real run's.
    assert Summary.objects.count() == 1 and MemoryObject.objects.count() == 1
    assert "Кандидат: прибыль" not in json.dumps(
        [list(Summary.objects.values()), list(Run.objects.values())], default=str
    )


@pytest.mark.slow
def test_the_candidate_writing_turn_is_replayed_with_an_evolve_skill_candidate(
    grown, fake_claude, alice, settings
):
    from tests.evolution.test_misses import _runs

    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.SHADOW_RATE, settings.SHADOW_DAILY_TURNS = 1.0, 1000
    settings.PROMOTE_MIN, settings.CANDIDATE_MAX_CASES = 50, 100
    settings.MISS_REPEAT = 3
    _runs(alice, 3, verdict="reject", verdict_note="не тот человек", model_turns=1)
    body = skills_repo.active()["evolve-skill"].body + f"\n\n{MARKER}: правь одну строку."
    evolving = candidates.write_candidate("evolve-skill", body=body, reason="r", author="s:k")

    def writes(text: str) -> list[dict]:
        args = {"skill": "use-tables", "body": text, "reason": "rejects"}
        return [{"name": "write_candidate", "arguments": args}]

    fake_claude.script(
        [
            {"match": "«use-tables»", "system_match": MARKER, "tools": writes("Одна строка."),
             "result": "ok"},
            {"match": "«use-tables»", "tools": writes("Сначала каталог, потом таблица."),
             "result": "ok"},
        ]
    )  # fmt: skip
    assert shadow.watch()["written"] == ["use-tables"]
    writer = Run.objects.get(verb="evolve", shadow_case__isnull=True)
    (case,) = ShadowCase.objects.filter(candidate=evolving)
    assert case.status == "done" and case.run_id == writer.pk
    assert case.request["call"] == "evolve" and case.agrees is False
    assert case.real_answer == shadow.written_by(writer)
    assert (case.shadow.verb, case.shadow.skills) == ("evolve", ["evolve-skill"])
    # The replay's write_candidate wrote nothing: the real one's candidate stands, alone.
    assert skills_repo.candidate("use-tables").body == "Сначала каталог, потом таблица."
    assert SkillCandidate.objects.filter(skill="use-tables").count() == 1
    (call,) = ToolCall.objects.filter(run=case.shadow)
    assert (call.tool, call.error, call.arguments) == ("write_candidate", "", {})  # forgotten


@pytest.mark.slow
def test_the_model_proposes_a_new_skill_and_instruction_lines_as_candidates(
    grown, fake_claude, alice, settings
):
    from tests.evolution.test_misses import _runs

    settings.MISS_REPEAT = 3
    _runs(alice, 3, verdict="reject", model_turns=1)
    proposal = {
        "name": "проверка дат",
        "beside": "use-tables",
        "description": "Когда в вопросе есть дата.",
        "body": "Сверь дату вопроса с датой записи.",
        "reason": "ответы о прошлом",
    }
    fake_claude.script(
        [
            {
                "match": "«use-tables»",
                "system_match": "propose_skill",
                "tools": [
                    {"name": "propose_skill", "arguments": proposal},
                    # The one name check refuses these: an existing skill, and not a name.
                    {"name": "propose_skill", "arguments": {**proposal, "name": "Use tables"}},
                    {"name": "propose_skill", "arguments": {**proposal, "name": "x; DROP"}},
                    {"name": "propose_skill", "arguments": {**proposal, "beside": "nothing"}},
                    {
                        "name": "propose_instruction",
                        "arguments": {"lines": "Даты — навык proverka-dat.", "reason": "даты"},
                    },
                ],
                "result": "Предложил.",
            }
        ]
    )
    live = skills_repo.instruction_path().read_text(encoding="utf-8")
    active = {n: s.body for n, s in skills_repo.active().items()}
    shadow.watch()
    writer = Run.objects.get(verb="evolve")
    calls = [(c.tool, bool(c.error)) for c in ToolCall.objects.filter(run=writer).order_by("pk")]
    assert calls == [
        ("propose_skill", False),
        ("propose_skill", True),
        ("propose_skill", True),
        ("propose_skill", True),
        ("propose_instruction", False),
    ]
    refused = [c.error for c in ToolCall.objects.filter(run=writer).exclude(error="")]
    assert "the existing 'use-tables'" in refused[0] and "is not a skill name" in refused[1]
    proposed = skills_repo.proposed()
    assert set(proposed) == {"proverka-dat", skills_repo.INSTRUCTION_NAME}
    new = proposed["proverka-dat"]
    assert (new.beside, new.tools, new.body) == ("use-tables", (), proposal["body"])
    assert proposed[skills_repo.INSTRUCTION_NAME].body == live.rstrip() + (
        "\n- Даты — навык proverka-dat."
    )
    opened = {c.skill: c for c in SkillCandidate.objects.filter(status="open")}
    assert opened["proverka-dat"].opened_by == "model"
    assert opened["proverka-dat"].opened_why == "ответы о прошлом"
    # Nothing live moved: not the instruction, not an active skill.
    assert skills_repo.instruction_path().read_text(encoding="utf-8") == live
    assert {n: s.body for n, s in skills_repo.active().items()} == active


@pytest.mark.django_db
def test_proposals_are_measured_in_the_calls_they_join_and_promoted_by_the_same_rule(
    alice, settings
):
    settings.SHADOW_RATE, settings.SHADOW_DAILY_TURNS = 1.0, 1000
    settings.PROMOTE_MIN, settings.PROMOTE_MARGIN, settings.CANDIDATE_MAX_CASES = 3, 0.1, 100
    new = candidates.propose_skill(
        "проверка дат", beside="use-tables", description="Когда есть дата.",
        body="Сверь даты.", reason="даты", author="model",
    )  # fmt: skip
    lines = candidates.propose_instruction("Даты — навык proverka-dat.", reason="r", author="model")
    # A recall whose level 2 read use-tables measures both; a remember of naming alone, the
    # instruction only; one case a candidate a run, whichever call offers it first.
    recall = Run.objects.create(
        architect=alice, verb="recall", text="q", caller="t", channel="api", status="done",
        model_turns=2, skills=["use-tables"],
    )  # fmt: skip
    cases = share.offer(recall, request={"text": "q"}, answer=measure.brief(found=False))
    assert sorted(c.candidate.skill for c in cases) == ["MEMORY-AGENT", "proverka-dat"]
    assert {c.request["call"] for c in cases} == {"recall"}
    again = share.offer(
        recall, request={}, answer={}, skills=["relearning-cycle"], call="relearning"
    )
    assert again == []
    # Tried in the shadow, each stands where it would: the new skill after the one it joins,
    # the lines in the instruction.
    tried = {"proverka-dat": skills_repo.candidate("proverka-dat"),
             "MEMORY-AGENT": skills_repo.candidate("MEMORY-AGENT")}  # fmt: skip
    with instruction.trying(tried):
        prompt = instruction.system_prompt(["use-tables"])
    assert "## Навык proverka-dat\n\nСверь даты." in prompt
    assert prompt.startswith(tried["MEMORY-AGENT"].body)
    assert "proverka-dat" not in instruction.system_prompt(["use-tables"])  # only in a trial

    # Decided by candidates.evaluate, as any candidate: too few verdicts — it stays.
    judged_cases(new, alice, 2, verdict="reject", agrees=False)
    assert candidates.evaluate(new) == "open"
    judged_cases(new, alice, 1, verdict="reject", agrees=False)
    judged_cases(lines, alice, 3, verdict="reject", agrees=False)
    assert candidates.evaluate(new) == "promoted"
    assert candidates.evaluate(lines) == "promoted"
    assert skills_repo.active()["proverka-dat"].beside == "use-tables"
    assert "## Навык proverka-dat" in instruction.system_prompt(["use-tables"])
    live = skills_repo.instruction_path().read_text(encoding="utf-8")
    assert live.rstrip().endswith("- Даты — навык proverka-dat.")
    assert skills_repo.proposed() == {}
    assert "promoted to active — won on verdicts" in skills_repo.history("MEMORY-AGENT")[0].message


@pytest.mark.slow
@pytest.mark.parametrize("own_summary", [False, True], ids=["cycle-writes", "research-writes"])
def test_the_research_relearning_summary_is_replayed_unless_the_research_wrote_it(
    grown, fake_claude, alice, client_for, settings, own_summary
):
    """Level 5 relearns too. When the research's model brought no summary, the cycle's model
    writes one by relearning-cycle, and that call is offered to the shadow the same way as after
    a level 2, 3 or 4 answer (``relearning.offer``). When the research wrote it, it is that
    call's answer (replayed as deep-analysis) and the cycle made no call to replay. On main the
    first case opened no case at all."""
    from memory.models import Research
    from tests.levels import test_research as research

    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.SHADOW_RATE, settings.SHADOW_DAILY_TURNS = 1.0, 1000
    settings.PROMOTE_MIN, settings.CANDIDATE_MAX_CASES = 50, 100
    friends = research.tell_friends(alice, client_for, settings)
    body = skills_repo.active()["relearning-cycle"].body + f"\n\n{MARKER}: пиши одной фразой."
    candidate = candidates.write_candidate("relearning-cycle", body=body, reason="r", author="s:k")
    concludes = research._model_concludes(research.DENIS)
    if not own_summary:
        value = json.loads(concludes["result"])
        del value["summary"]
        concludes = {**concludes, "result": json.dumps(value, ensure_ascii=False)}
    fake_claude.script(
        [
            _summary_rule("Кандидат: Денис и Кремль.", system_match=MARKER),
            _summary_rule("Денис служил в Кремле в 1992–1994 и мог знать Ельцина."),
            concludes,
            research.LEVEL2_EMPTY,
        ]
    )
    answer = friends.recall(research.QUESTION, depth="extreme", wait=True)
    assert answer["answer"]["found"] is True and answer["depth_used"] == 5
    relearned = Research.objects.get().relearned
    assert relearned["written_by"] == "model"
    cases = ShadowCase.objects.filter(candidate=candidate)
    if own_summary:
        assert relearned["text"].startswith("Денис мог знать Ельцина")  # the research's own
        assert not cases.exists()  # no call of the cycle's model to replay
        return
    assert relearned["text"].startswith("Денис служил в Кремле")  # the cycle's model wrote it
    (case,) = cases
    assert case.status == "done" and str(case.run_id) == answer["run"]
    assert case.request["call"] == "relearning" and case.request["result"]["level"] == 5
    assert case.request["result"]["facts"][0]["text"] == research.DENIS
    assert case.real_answer == measure.brief(
        found=True, text="Денис служил в Кремле в 1992–1994 и мог знать Ельцина."
    )
    assert case.agrees is False  # the candidate's summary says other things
    assert (case.shadow.skills, case.shadow.model_turns) == (["relearning-cycle"], 1)
    # The replay kept nothing and opened no job: one summary, the real one's.
    assert Research.objects.count() == 1 and Summary.objects.count() == 1
    assert "Кандидат: Денис" not in json.dumps(list(Summary.objects.values()), default=str)
