"""Denial (PASSPORT.md §16): the conclusion is revoked, the fact stays, the rejected hypothesis
is kept so the same chain does not propose it again. The owner's Denis example, end to end, with
the fake `claude` for the research's related terms."""

from __future__ import annotations

import json

import pytest

from memory import model
from memory.levels.context import RecallContext
from memory.models import Note, Run, Summary
from memory.services.research import job as research_job
from tests.levels.test_research import (
    DENIS,
    LEVEL2_EMPTY,
    QUESTION,
    TERMS,
    _model_concludes,
    tell_friends,
)

pytestmark = pytest.mark.usefixtures("grown")

WORDS = "Мой друг на самом деле не был знаком с Ельциным: они служили рядом, но он его не видел."


@pytest.fixture
def concluded(fake_claude, alice, client_for, settings):
    """The research proposed «Денис может быть связан с Ельциным»; returns (api, its answer)."""
    api = tell_friends(alice, client_for, settings)
    settings.CELERY_TASK_ALWAYS_EAGER = True
    fake_claude.script([TERMS, LEVEL2_EMPTY])
    answer = api.recall(QUESTION, depth="extreme", wait=True)
    assert answer["answer"]["found"] is True and "Денис" in answer["answer"]["text"]
    fake_claude.script([])
    settings.MODEL_BACKEND = "none"  # the denial is told with no model, as a service would
    model.backend.cache_clear()
    return api, answer


def test_the_denis_example_denied_is_not_proposed_again_and_the_fact_stays(concluded, alice):
    api, proposed = concluded
    told = api.remember(WORDS, deny=proposed["run"])
    assert told["params"]["deny"]["fate"] == "accepted"
    assert proposed["run"] in told["params"]["deny"]["note"]
    kept = told["relearned"]
    claim = Summary.objects.get(pk=kept["summary"])
    # The rejected hypothesis is kept as a claim of kind denied, linked to its run and chain.
    assert claim.claim == "denied" and claim.denied_run_id is not None
    assert str(claim.denied_run_id) == proposed["run"]
    assert claim.basis[0]["text"] == DENIS
    earlier = Summary.objects.get(pk=proposed["relearned"]["summary"])
    assert claim.denies_id == earlier.pk
    assert earlier.denied_by_id is not None  # kept, never deleted, but it answers no more
    assert WORDS in claim.text
    assert Note.objects.filter(architect=alice, text=WORDS).exists()  # the words are a note too

    # The same question: checked and denied — the conclusion is not proposed.
    for depth in ("standard", "extreme"):
        again = api.recall(QUESTION, depth=depth)
        assert again["answer"]["found"] is True and again["depth_used"] == 1
        text = again["answer"]["text"]
        assert "отверг" in text
        assert "мог(ла) быть связан(а)" not in text
        assert again["answer"]["data"]["summaries"][0]["summary"] == str(claim.pk)
        assert "research" not in again

    # The fact it rested on stays, and is still recalled.
    fact = api.recall("Где служил Денис с 1992 по 1994 год?")
    assert fact["answer"]["found"] is True
    assert DENIS in fact["answer"]["text"]


def test_research_does_not_draw_a_denied_conclusion_again(concluded, fake_claude, settings, alice):
    api, proposed = concluded
    api.remember(WORDS, deny=proposed["run"])
    # The research itself, run again for the question (as when a caller skips level 1 by naming
    # the run that answered it): the same chain leads to the denied conclusion, so it is not drawn.
    run = Run.objects.create(
        architect=alice, verb="recall", text=QUESTION, caller="t", channel="api"
    )
    ctx = RecallContext.of(
        architect=alice,
        text=QUESTION,
        scope=[],
        lang="ru",
        run=run,
    )
    settings.CELERY_TASK_ALWAYS_EAGER = False
    research_job.start(ctx, [1, 3, 4])
    settings.MODEL_BACKEND = "claude"
    model.backend.cache_clear()
    fake_claude.script([TERMS])
    done = research_job.conduct(str(run.pk))
    assert done.status == "done" and done.answer["found"] is False
    assert any("отвергнут" in (s.get("note") or "") for s in done.progress["steps"])


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("not-a-run", "не называет"),
        ("0b6c7a36-51a6-4a39-9d7e-5a4bd3a36e11", "не называет"),
    ],
)
def test_a_denial_with_nothing_to_attach_to_says_what_is_missing(alice, client_for, value, why):
    api = client_for(alice)
    told = api.remember(WORDS, deny=value)
    fate = told["params"]["deny"]
    assert fate["fate"] == "not_supported" and why in fate["note"]
    assert "relearned" not in told
    assert Note.objects.filter(architect=alice, text=WORDS).exists()


def test_a_run_that_concluded_nothing_cannot_be_denied(alice, client_for):
    api = client_for(alice)
    answer = api.recall("Какой у меня любимый цвет?")
    told = api.remember(WORDS, deny=answer["run"])
    fate = told["params"]["deny"]
    assert fate["fate"] == "not_supported" and answer["run"] in fate["note"]


@pytest.fixture
def friends(alice, client_for, settings):
    return tell_friends(alice, client_for, settings)


REMEMBER_PARSE = {
    "match": "Фраза: «",
    "system_match": "разбор фразы",
    "result": json.dumps({"entities": [], "relations": []}),
}
REMEMBER_THINK = {"match": "Запомни", "result": "Записал: вывод отвергнут."}


def test_a_denial_naming_the_thread_goes_into_that_conversation(fake_claude, friends, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    fake_claude.script([_model_concludes(DENIS), LEVEL2_EMPTY])
    proposed = friends.recall(QUESTION, depth="extreme", wait=True)
    thread = proposed["thread"]  # the research's model conversation
    assert thread and proposed["research"]["progress"]["thread"] == thread

    fake_claude.script([REMEMBER_PARSE, REMEMBER_THINK])
    told = friends.remember(WORDS, deny=thread)
    assert told["params"]["deny"]["fate"] == "accepted"
    assert proposed["run"] in told["params"]["deny"]["note"]  # the run the thread concluded in
    assert told["thread"] == thread
    turns = fake_claude.transcript(thread)
    assert any(WORDS in turn["prompt"] for turn in turns[1:])  # the words went into it
    assert Summary.objects.get(pk=told["relearned"]["summary"]).claim == "denied"
    fake_claude.script([])
    again = friends.recall(QUESTION)
    assert again["depth_used"] == 1 and "отверг" in again["answer"]["text"]
