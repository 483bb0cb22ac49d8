"""Level 5: research (skill deep-analysis) as a Celery job, and ``previous_results``.

Through the real embedded stores, the fake `claude` (a scripted model behind the real MCP
server) where a model is needed, and Celery's own eager mode where the job should run in the
test's process (a real worker runs it in tests/test_memory_run.py)."""

from __future__ import annotations

import json

import pytest

from memory import model
from memory.models import Research, Run, Summary, SummaryLink
from memory.services.research import job as research_job
from memory.shape.tools import promote_to_list

QUESTION = "Кто из моих друзей мог знать Ельцина?"
DENIS = "Мой друг Денис с 1992 по 1994 год служил в Кремле."
MISHA = "Миша работает поваром в Казани."
TERMS = {
    "match": "Неизвестное слово",
    "system_match": "deep-analysis",
    "result": json.dumps({"terms": ["Кремль", "президент", "правительство"]}, ensure_ascii=False),
}
LEVEL2_EMPTY = {
    "match": "Каталог:",
    "result": json.dumps(
        {"found": False, "kind": "probabilistic", "text": "В таблицах этого нет."},
        ensure_ascii=False,
    ),
}

pytestmark = pytest.mark.usefixtures("grown")


def _architect(api):
    from memory.models import ApiKey

    return ApiKey.find(api.key).architect


@pytest.fixture
def friends(alice, client_for, settings):
    return tell_friends(alice, client_for, settings)


def tell_friends(alice, client_for, settings):
    """Friends in a grown table and what one of them did, told with no model."""
    api = client_for(alice, "extreme")
    backend = settings.MODEL_BACKEND
    settings.MODEL_BACKEND = "none"
    model.backend.cache_clear()
    promote_to_list(
        architect=alice,
        kind="друзья",
        items=["Денис", "Миша"],
        basis="у меня есть друзья Денис и Миша",
    )
    api.remember(DENIS)
    api.remember(MISHA)
    settings.MODEL_BACKEND = backend
    model.backend.cache_clear()
    return api


def test_the_denis_example_researched_with_a_model_and_cheap_the_second_time(
    fake_claude, friends, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # the job runs in this process, as Celery's eager
    fake_claude.script([TERMS, LEVEL2_EMPTY])
    deep = friends.recall(QUESTION, depth="deep")  # levels 1–4 alone do not answer
    assert deep["answer"]["found"] is False and deep["depth_used"] == 4

    answer = friends.recall(QUESTION, depth="extreme", wait=True)
    assert answer["answer"]["found"] is True
    assert answer["depth_used"] == 5 and answer["kind"] == "probabilistic"
    assert "Денис" in answer["answer"]["text"] and DENIS in answer["answer"]["text"]
    chain = answer["answer"]["data"]["chain"]
    assert chain[0] == {"step": "tables", "entity": "Денис"}
    assert chain[1]["unknown"] == "Ельцин" and chain[1]["term"] == "Кремль"
    note_run = Run.objects.get(pk=chain[2]["run"])  # which run recorded the basis
    assert note_run.verb == "remember" and note_run.text == DENIS
    assert answer["params"]["wait"] == {"fate": "accepted"}
    research = answer["research"]
    assert research["run"] == answer["run"] and research["status"] == "done"
    progress = research["progress"]
    assert progress["levels"] == [1, 2, 3, 4]
    assert progress["entities"] == ["Денис", "Миша"]
    assert progress["terms"] == ["Кремль", "президент", "правительство"]
    assert progress["model_turns"] >= 1
    assert [s["step"] for s in progress["steps"]] == [
        "tables",
        "graph",
        "vectors",
        "terms",
        "terms_graph",
    ]
    # The relearning cycle kept it (level 5), with every id.
    kept = answer["relearned"]
    summary = Summary.objects.get(pk=kept["summary"])
    assert summary.level == 5 and summary.basis[0]["text"] == DENIS
    assert kept["object"] and kept["vectors"]["status"] == "written"
    assert Research.objects.get(pk=answer["run"]).relearned == kept
    # Step 6: the friends table holds Denis, so his row is linked to the summary.
    assert kept["link"]["status"] == "written" and kept["link"]["items"] == 1
    (link,) = SummaryLink.objects.filter(summary=summary)
    assert (link.entity, link.table) == ("Денис", "mem_druzya")

    # The same question at standard: level 1, from the summary, no model turn.
    fake_claude.script([])  # a model call now would fail the recall's level 2 loudly
    again = friends.recall(QUESTION)
    assert again["answer"]["found"] is True and again["depth_used"] == 1
    assert again["answer"]["data"]["summaries"][0]["summary"] == kept["summary"]
    assert Run.objects.get(pk=again["run"]).model_turns == 0


def test_without_a_model_the_research_says_what_it_could_not_do(friends, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    answer = friends.recall("Кто из моих друзей мог знать Горбачёва?", depth="extreme", wait=True)
    research = answer["research"]
    assert research["status"] == "done"
    terms_step = [s for s in research["progress"]["steps"] if s["step"] == "terms"][0]
    assert terms_step["unknown"] == ["Горбачев"]  # natasha normalises ё
    # No model: the related terms come from the graph's neighbours, and the step says so.
    assert "модель не настроена" in terms_step["note"] or "без модели" in terms_step["note"]
    assert research["progress"]["model_turns"] == 0
    if not answer["answer"]["found"]:
        assert answer["answer"]["text"].startswith("Исследование не нашло ответа")
        assert "relearned" not in answer
    else:  # an inference through a neighbour: it names its chain
        assert answer["kind"] == "probabilistic" and answer["answer"]["data"]["chain"]


def test_the_answer_comes_at_once_and_a_later_recall_naming_the_run_fetches_it(
    fake_claude, friends, settings
):
    fake_claude.script([TERMS, LEVEL2_EMPTY])
    settings.CELERY_TASK_ALWAYS_EAGER = False  # sent to the real broker; no worker takes it here
    first = friends.recall(QUESTION, depth="extreme")
    assert first["answer"]["found"] is False and first["depth_used"] == 5
    assert first["research"]["status"] == "queued"
    level5 = [e for e in first["report"] if e["level"] == 5][0]
    assert level5["status"] == "running" and first["run"] in level5["note"]
    assert first["run"] in first["answer"]["text"]

    # A worker takes it (here: the task body, called as the worker calls it), idempotently.
    from memory.tasks import research_run

    assert research_run(first["run"]) == "done"
    assert research_run(first["run"]) == "done"  # a redelivery changes nothing
    assert Research.objects.get(pk=first["run"]).attempts == 1

    # Fetched by naming the run — at standard depth even: reading a paid job costs nothing.
    fake_claude.script([])
    later = friends.recall(QUESTION, previous_results=[first["run"]])
    assert later["answer"]["found"] is True and later["depth_used"] == 5
    assert DENIS in later["answer"]["text"]
    skipped = {e["level"]: e["note"] for e in later["report"] if e["status"] == "skipped"}
    assert set(skipped) == {1, 2, 3, 4}  # each already found nothing for this question
    assert first["run"] in skipped[1]
    assert later["params"]["previous_results"]["fate"] == "accepted"


def test_the_soft_limit_closes_the_job_with_what_was_found(friends, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    first = friends.recall(QUESTION, depth="extreme")
    done = research_job.conduct(first["run"], out_of_time=lambda: True)
    assert done.status == "done" and done.answer["found"] is False
    assert "время исследования вышло" in done.answer["text"]


def test_a_broker_that_is_down_fails_the_job_not_the_answer(friends, settings, monkeypatch):
    # Mocked: a broker cannot be taken down from inside a test; the refusal is Celery's own.
    from memory.celery import app

    def down(*args, **kwargs):
        raise ConnectionError("broker unreachable")

    settings.CELERY_TASK_ALWAYS_EAGER = False
    monkeypatch.setattr(app, "send_task", down)
    answer = friends.recall(QUESTION, depth="extreme")  # a 200, asserted by the client
    assert answer["research"]["status"] == "failed"
    assert "broker unreachable" in answer["research"]["error"]


def test_wait_without_extreme_says_there_is_nothing_to_wait_for(friends):
    answer = friends.recall(QUESTION, depth="deep", wait=True)
    assert answer["params"]["wait"]["fate"] == "accepted"
    assert "extreme" in answer["params"]["wait"]["note"]
    assert "research" not in answer


def test_a_key_capped_below_extreme_starts_no_research(alice, client_for):
    capped = client_for(alice, "deep")
    answer = capped.recall(QUESTION, depth="extreme")
    assert answer["depth_used"] <= 4 and "research" not in answer
    assert not Research.objects.exists()


def test_previous_results_are_not_returned_again(alice, client_for):
    api = client_for(alice, "deep")
    for text in (
        "Я люблю зелёный чай с жасмином.",
        "Зелёный чай я покупаю в лавке на углу.",
        "По утрам я пью зелёный чай.",
    ):
        api.remember(text)
    first = api.recall("Какой зелёный чай я пью?")
    got = [n["note"] for n in first["answer"]["data"]["notes"]]
    assert got
    second = api.recall("Какой зелёный чай я пью?", previous_results=[first["run"]])
    again = [n.get("note") for n in (second["answer"].get("data") or {}).get("notes", [])]
    again += [c.get("note") for c in (second["answer"].get("data") or {}).get("candidates", [])]
    assert not set(got) & set(again)
    assert second["params"]["previous_results"]["fate"] == "accepted"
    # An item named by its id is left out alike; a string naming nothing is said.
    third = api.recall("Какой зелёный чай я пью?", previous_results=[f"notes:{got[0]}", "what?"])
    shown = [n["note"] for n in (third["answer"].get("data") or {}).get("notes", [])]
    assert got[0] not in shown
    assert "what?" in third["params"]["previous_results"]["note"]


CONCLUSION = "Денис мог знать Ельцина: в 1992–1994 годах он служил в Кремле."


def _model_concludes(quote: str) -> dict:
    return {
        "match": "Неизвестное слово",
        "system_match": "deep-analysis",
        "tools": [{"name": "find_notes", "arguments": {"words": "Кремль"}}],
        "result": json.dumps(
            {
                "terms": ["Кремль", "президент"],
                "found": True,
                "text": CONCLUSION,
                "basis": [{"quote": quote, "term": "Кремль", "entity": "Денис"}],
                "summary": "Денис мог знать Ельцина (служил в Кремле 1992–1994).",
            },
            ensure_ascii=False,
        ),
    }


def test_with_a_model_the_research_is_concluded_through_the_tools(fake_claude, friends, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    fake_claude.script([_model_concludes(DENIS), LEVEL2_EMPTY])
    answer = friends.recall(QUESTION, depth="extreme", wait=True)
    assert answer["answer"]["found"] is True and answer["depth_used"] == 5
    text = answer["answer"]["text"]
    assert text.startswith(CONCLUSION) and f"Основание: «{DENIS}»" in text
    (link,) = answer["answer"]["data"]["chain"]
    assert link["step"] == "model" and link["entity"] == "Денис" and link["term"] == "Кремль"
    assert Run.objects.get(pk=link["run"]).text == DENIS  # the run that recorded the basis
    progress = answer["research"]["progress"]
    assert "find_notes" in progress["tools"]  # the model called the tool, through MCP
    assert [s["step"] for s in progress["steps"]] == ["tables", "graph", "vectors", "terms"]
    kept = answer["relearned"]
    assert kept["written_by"] == "model" and "Кремле 1992–1994" in kept["text"]


def test_a_model_quoting_what_was_never_told_is_no_basis(fake_claude, friends, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    fake_claude.script([_model_concludes("Денис пил чай с Ельциным."), LEVEL2_EMPTY])
    answer = friends.recall(QUESTION, depth="extreme", wait=True)
    # The invented quote is dropped; the code checks the model's terms itself and finds the note.
    assert answer["answer"]["found"] is True
    assert not answer["answer"]["text"].startswith(CONCLUSION)
    assert answer["answer"]["data"]["chain"][0] == {"step": "tables", "entity": "Денис"}
    assert DENIS in answer["answer"]["text"]


def test_research_through_the_http_api_backend(friends, settings):
    """The Anthropic wire format from a local stub (no network here): the tool loop, the MCP
    tools and the database are real."""
    from tests.model.test_http_backends import Stub

    def text(value: dict) -> tuple[int, dict]:
        reply = {"content": [{"type": "text", "text": json.dumps(value, ensure_ascii=False)}]}
        return 200, {**reply, "usage": {"input_tokens": 10, "output_tokens": 5}}

    find = {"type": "tool_use", "id": "t1", "name": "find_notes", "input": {"words": "Кремль"}}
    concluded = json.loads(_model_concludes(DENIS)["result"])
    stub = Stub(
        [
            text({"found": False, "kind": "probabilistic", "text": "нет"}),  # level 2
            (200, {"content": [find], "usage": {}}),  # research: the model calls the tool
            text(concluded),  # and concludes
        ]
    )
    settings.MODEL_BACKEND = "anthropic"
    settings.ANTHROPIC_BASE_URL = stub.url
    settings.CELERY_TASK_ALWAYS_EAGER = True
    model.backend.cache_clear()
    try:
        answer = friends.recall(QUESTION, depth="extreme", wait=True)
    finally:
        stub.close()
        model.backend.cache_clear()
    assert answer["answer"]["found"] is True and answer["depth_used"] == 5
    assert answer["answer"]["text"].startswith(CONCLUSION)
    assert answer["answer"]["data"]["chain"][0]["step"] == "model"
    research_request = stub.requests[1]["body"]
    assert "find_notes" in {t["name"] for t in research_request["tools"]}
    assert "deep-analysis" in json.dumps(research_request["system"], ensure_ascii=False)
    tool_result = json.dumps(stub.requests[2]["body"]["messages"], ensure_ascii=False)
    assert DENIS in tool_result  # find_notes answered with the told note


def test_a_store_that_fails_during_the_job_is_said_not_read_as_nothing(
    friends, settings, monkeypatch
):
    # Mocked: the graph cannot be taken down for one job only; its engine raises as one that
    # lost its server does (a ConnectionError), and only the job's steps see it.
    from memory.services.research import steps

    class Down:
        def query(self, **kwargs):
            raise ConnectionError("graph server unreachable")

    settings.CELERY_TASK_ALWAYS_EAGER = False
    first = friends.recall(QUESTION, depth="extreme")
    monkeypatch.setattr(steps, "graph", lambda: Down())
    done = research_job.conduct(first["run"])
    assert done.status == "done"  # one store's loss is not the job's end
    assert done.progress["failed"] == [
        {"store": "graph", "error": "ConnectionError: graph server unreachable"}
    ]
    assert done.answer["found"] is False
    assert "хранилище «graph» не ответило" in done.answer["text"]

    later = friends.recall(QUESTION, previous_results=[first["run"]])
    failed = [e for e in later["report"] if e["level"] == 5 and e["status"] == "failed"]
    assert [(e["source"], e["store"]) for e in failed] == [("graph", "research")]
    assert "graph server unreachable" in failed[0]["note"]


def test_a_hypothesis_never_rests_on_a_note_that_holds_elsewhere(
    fake_claude, alice, client_for, settings
):
    # Denis served in the Kremlin — told as true in Moscow; asked about Paris, the research does
    # not propose him, and says why.
    api = client_for(alice, "extreme")
    backend = settings.MODEL_BACKEND
    settings.MODEL_BACKEND = "none"
    model.backend.cache_clear()
    promote_to_list(architect=alice, kind="друзья", items=["Денис", "Миша"], basis="друзья")
    api.remember(DENIS, scope=[{"kind": "geo", "place": "moscow"}])
    api.remember(MISHA)
    settings.MODEL_BACKEND = backend
    model.backend.cache_clear()
    settings.CELERY_TASK_ALWAYS_EAGER = True
    fake_claude.script([TERMS, LEVEL2_EMPTY])

    paris = api.recall(
        QUESTION, depth="extreme", wait=True, scope=[{"kind": "geo", "place": "paris"}]
    )
    assert paris["answer"]["found"] is False
    step = [s for s in paris["research"]["progress"]["steps"] if s["step"] == "terms_graph"][0]
    assert "другом месте" in step["note"]
    assert DENIS not in paris["answer"]["text"]

    moscow = api.recall(
        QUESTION, depth="extreme", wait=True, scope=[{"kind": "geo", "place": "moscow"}]
    )
    assert moscow["answer"]["found"] is True and DENIS in moscow["answer"]["text"]
