"""Levels 3 and 4 on the embedded stores: filled by code on remember, read at zero model cost."""

from __future__ import annotations

import pytest

from memory.levels import graph as graph_level
from memory.levels import vectors as vectors_level
from memory.models import OutboxItem, Summary
from memory.stores import graph as graph_module
from tests.conftest import decide_at, probe_p

FACTS = [
    "Мой брат Антон работает хирургом в областной больнице.",
    "Каждое утро я пробегаю пять километров вдоль набережной.",
    "Мы с женой познакомились в Праге в 2015 году.",
    "Моя дочь Вера учится играть на виолончели.",
    "Я не переношу кинзу и всегда прошу убрать её из блюд.",
]


@pytest.fixture
def model_calls(monkeypatch):
    """Every call the in-process graph makes to its model function (which raises, as in
    production). Set before the graph opens a workspace: LightRAG binds the function then."""
    calls: list[str] = []
    refuse = graph_module._no_model

    async def spy(*args, **kwargs):
        calls.append(str(args[0])[:80] if args else "")
        return await refuse(*args, **kwargs)

    monkeypatch.setattr(graph_module, "_no_model", spy)
    return calls


@pytest.fixture
def five_facts(model_calls, bob, client_for):
    api = client_for(bob, "deep")
    for fact in FACTS:
        stored = api.remember(fact)
        # The note, and the note in its conversation context.
        assert stored["stores"]["vectors"] == {"status": "written", "items": 2}
    assert not OutboxItem.objects.filter(status="queued").exists()
    return api


@pytest.mark.django_db
def test_a_paraphrase_is_found_at_level_4_with_the_right_fact_first(five_facts, settings):
    # Whether the list holds the answer is the decision's (memory.decision): under its threshold
    # the nearest note is the first candidate, not an answer; at or over it, the same note
    # answers. The threshold itself is fitted by bench/decision.py.
    question = "На каком инструменте занимается дочка?"
    p = probe_p(five_facts, settings, question)
    decide_at(settings, "meaning", p + 0.001)
    unsure = five_facts.recall(question, depth="deep")
    assert unsure["depth_used"] == 4
    first = unsure["answer"]["data"]["candidates"][0]
    assert first["text"] == FACTS[3]
    assert unsure["answer"]["found"] is False
    decide_at(settings, "meaning", p - 0.001)
    answer = five_facts.recall(question, depth="deep")
    assert answer["answer"]["found"] is True
    assert answer["depth_used"] == 4
    assert answer["kind"] == "probabilistic"
    hits = answer["answer"]["data"]["hits"]
    assert hits[0]["text"] == FACTS[3]
    assert [e["status"] for e in answer["report"] if e["level"] < 4] == [
        "empty",
        "empty",
        "skipped",
        "empty",
    ]


@pytest.mark.django_db
def test_the_same_paraphrase_at_standard_depth_stops_before_the_vectors(five_facts):
    answer = five_facts.recall("На каком инструменте занимается дочка?")
    assert answer["answer"]["found"] is False
    assert answer["depth_used"] == 3
    assert all(e["level"] <= 3 for e in answer["report"])


@pytest.mark.django_db
def test_a_list_under_the_decision_threshold_is_not_answered_and_the_report_says_so(
    five_facts, settings
):
    # The report names the probability the decision gave and the threshold in force.
    question = "Какую зелень мне нельзя класть в еду?"
    p = probe_p(five_facts, settings, question)
    decide_at(settings, "meaning", p + 0.001)
    answer = five_facts.recall(question, depth="deep")
    decided = [e for e in answer["report"] if e["level"] == 4 and e["source"] == "decision"][0]
    assert decided["status"] == "empty"
    assert f"{p:.2f}" in decided["note"] and f"{p + 0.001:.2f}" in decided["note"]
    assert answer["answer"]["found"] is False


@pytest.mark.django_db
def test_a_question_joining_two_entities_is_answered_by_the_graph_at_level_3(
    five_facts, model_calls
):
    # No single note holds the question past the answer bar (level 1 sees two halves); the
    # graph joins the notes of the two people it names.
    answer = five_facts.recall("Где работает Антон и на чём учится играть Вера?", trace=True)
    assert answer["depth_used"] == 3
    assert answer["answer"]["found"] is True
    notes_entry = [e for e in answer["report"] if e["level"] == 1 and e["source"] == "notes"][0]
    assert notes_entry["status"] == "empty"
    graph_entry = [e for e in answer["report"] if e["level"] == 3][0]
    assert graph_entry["status"] == "answered"
    assert "Антон" in graph_entry["note"] and "Вера" in graph_entry["note"]
    assert FACTS[0] in answer["answer"]["text"] and FACTS[3] in answer["answer"]["text"]
    keywords = [t for t in answer["trace"] if t.get("level") == 3 and t["event"] == "keywords"][0]
    assert keywords["mode"] == "mix" and keywords["hl_keywords"] and keywords["ll_keywords"]
    assert model_calls == []


@pytest.mark.django_db
def test_an_entity_named_with_words_never_told_is_a_candidate_not_an_answer(
    five_facts, model_calls
):
    # «Прага» is known, «связана» and «жизнь» were never told: the graph's Prague note is
    # offered as a candidate, and the answer says nothing was found.
    answer = five_facts.recall("С чем связана Прага в моей жизни?")
    assert answer["depth_used"] == 3
    assert answer["answer"]["found"] is False
    graph_entry = [e for e in answer["report"] if e["level"] == 3][0]
    assert graph_entry["status"] == "empty" and "Прага" in graph_entry["note"]
    candidates = answer["answer"]["data"]["candidates"]
    assert candidates[0]["text"] == FACTS[2]
    assert model_calls == []


@pytest.mark.django_db
def test_an_unrelated_question_gets_nothing_from_the_graph(five_facts):
    answer = five_facts.recall("Какая у меня кошка?", depth="deep")
    graph_entry = [e for e in answer["report"] if e["level"] == 3][0]
    assert graph_entry["status"] == "empty"
    assert graph_entry["note"].startswith("граф вернул")
    assert answer["answer"]["found"] is False  # and the vectors find nothing above the floor


@pytest.mark.django_db
def test_another_architect_finds_nothing_in_the_vectors_or_the_graph(
    five_facts, alice, client_for, settings
):
    # The owner's own question finds the fact in both stores (the graph answers at level 3; a
    # paraphrase reaches the vectors at level 4, with the floor under its similarity)...
    decide_at(settings, "meaning", 0.0)
    owner = five_facts.recall("Где работает Антон и на чём учится играть Вера?", depth="deep")
    assert [e["returned"] for e in owner["report"] if e["level"] == 3][0] > 0
    by_meaning = five_facts.recall("На каком инструменте занимается дочка?", depth="deep")
    assert by_meaning["depth_used"] == 4 and by_meaning["answer"]["found"] is True
    assert by_meaning["answer"]["data"]["hits"][0]["text"] == FACTS[3]
    # ...and the same questions from another architect find nothing anywhere.
    alice_api = client_for(alice, "deep")
    for question in (
        "Где работает Антон и на чём учится играть Вера?",
        "На каком инструменте занимается дочка?",
    ):
        answer = alice_api.recall(question, depth="deep")
        assert answer["answer"]["found"] is False
        assert answer["depth_used"] == 4  # every store was asked
        for entry in answer["report"]:
            assert entry["returned"] == 0


@pytest.mark.parametrize("question", ["ok", "a", "?", "ок"])
@pytest.mark.django_db
def test_a_question_too_short_for_the_graph_library_is_a_report_entry_not_a_500(
    five_facts, question
):
    answer = five_facts.recall(question, depth="deep")  # 200, asserted by the client
    graph_entry = [e for e in answer["report"] if e["level"] == 3][0]
    assert graph_entry["status"] in ("failed", "empty")
    assert graph_entry["note"]
    if graph_entry["status"] == "failed":
        assert graph_entry["note"].startswith("graph_refused: ")
    assert answer["depth_used"] == 4  # the climb went on past the graph


@pytest.mark.django_db
def test_a_store_that_raises_anything_is_its_failed_entry_with_the_reason(five_facts, monkeypatch):
    class Broken:
        name = "broken"

        def query(self, **kwargs):
            raise RuntimeError("the disk is gone")

        def search(self, **kwargs):
            raise OSError("qdrant folder vanished")

    monkeypatch.setattr(graph_level, "graph", lambda: Broken())
    monkeypatch.setattr(vectors_level, "vectors", lambda: Broken())
    answer = five_facts.recall("С чем связана Прага в моей жизни?", depth="deep")
    failed = {
        (e["level"], e["source"]): e["note"] for e in answer["report"] if e["status"] == "failed"
    }
    assert failed[(3, "lightrag")] == "RuntimeError: the disk is gone"
    for kind in ("notes", "summaries", "objects"):
        assert failed[(4, kind)] == "OSError: qdrant folder vanished"
    assert answer["answer"]["found"] is False


@pytest.mark.django_db
def test_a_level_3_answer_is_relearned_when_configured_and_costs_level_1_next_time(
    five_facts, model_calls, settings
):
    # The owner's passport §5 puts a level-3 answer back into circulation; measured, it already
    # costs what its summary would (PASSPORT.md §16), so it is kept only from RELEARN_FROM_LEVEL.
    settings.RELEARN_FROM_LEVEL = 3
    question = "Где работает Антон и на чём учится играть Вера?"
    first = five_facts.recall(question)
    assert first["answer"]["found"] is True and first["depth_used"] == 3
    kept = first["relearned"]
    assert kept["skill"] == "relearning-cycle" and kept["summary"] and kept["object"]
    summary = Summary.objects.get(pk=kept["summary"])
    assert summary.level == 3
    assert {b["text"] for b in summary.basis} >= {FACTS[0], FACTS[3]}  # the graph's sources

    again = five_facts.recall(question)
    assert again["answer"]["found"] is True and again["depth_used"] == 1
    assert again["answer"]["data"]["summaries"][0]["summary"] == kept["summary"]
    assert "relearned" not in again  # nothing new: the answer is what was learned
    assert model_calls == []


@pytest.mark.django_db
def test_a_summarys_chunk_answers_where_it_holds_and_never_once_denied(bob):
    # Level 3 reads a relearned summary's chunk as it reads a note's: by its scope, and not at
    # all once the architect denied its conclusion (PASSPORT.md §16).
    from memory.levels.context import RecallContext
    from memory.models import Run
    from memory.stores.graph_types import summary_chunk_id

    barcelona = [{"kind": "geo", "place": "barcelona"}]
    madrid = [{"kind": "geo", "place": "madrid"}]

    def summary(scope):
        return Summary.objects.create(
            architect=bob, question="q", text="t", level=3, kind="probabilistic", scope=scope,
            written_by="code",
        )  # fmt: skip

    here, denied = summary(barcelona), summary([])
    run = Run.objects.create(architect=bob, verb="remember", caller="t", channel="api")
    Summary.objects.filter(pk=denied.pk).update(denied_by=run)
    chunks = [{"source": summary_chunk_id(s.pk), "content": "t"} for s in (here, denied)]

    def kept(scope):
        ctx = RecallContext.of(architect=bob, text="q", scope=scope, lang="ru")
        found, _ = graph_level._current_in_scope(ctx, chunks)
        return [c["source"] for c in found]

    assert kept(barcelona) == [summary_chunk_id(here.pk)]
    assert kept(madrid) == []
    assert kept([]) == [summary_chunk_id(here.pk)]  # unbound question: the denied one never
