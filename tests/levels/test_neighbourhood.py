"""The neighbourhood lift: a ranked note gains a share of what the notes around it in its
conversation scored (``notes.lift``), at level 1 and at level 4 alike. Each note knows its
conversation and its place there from the moment it is written; the migration and ``reindex``
place old notes by the same rule."""

from __future__ import annotations

import pytest
from django.utils import timezone

from memory.knowledge.notes import lift, note_create, reindex
from memory.levels import RecallContext
from memory.levels import relational as tables_level
from memory.levels import vectors as vectors_level
from memory.models import Note

# ---- the rule, pure ----------------------------------------------------------------------


def test_a_hit_among_matching_neighbours_outranks_an_equal_hit_alone(settings):
    settings.RANK_NEIGHBOURHOOD_NOTES, settings.RANK_NEIGHBOURHOOD_WEIGHT = 5, 0.5
    scores = {"alone": 1.0, "among": 1.0, "near": 0.6}
    places = {"alone": ("b", 3, None), "among": ("a", 3, None), "near": ("a", 0, None)}
    lifted = lift(scores, places)
    assert lifted["alone"] == 1.0
    assert lifted["among"] == pytest.approx(1.0 + 0.5 * 0.6 / 10)
    assert lifted["near"] == pytest.approx(0.6 + 0.5 * 1.0 / 10)


def test_only_the_same_conversation_within_the_width_lifts(settings):
    settings.RANK_NEIGHBOURHOOD_NOTES, settings.RANK_NEIGHBOURHOOD_WEIGHT = 2, 1.0
    scores = {"x": 1.0, "other talk": 1.0, "too far": 1.0, "unplaced": 1.0}
    places = {"x": ("a", 10, None), "other talk": ("b", 11, None), "too far": ("a", 13, None)}
    lifted = lift(scores, places)
    assert lifted == scores  # another conversation, three places away, no place at all
    places["close"] = ("a", 12, None)
    lifted = lift({**scores, "close": 0.4}, places)
    assert lifted["x"] == pytest.approx(1.0 + 0.4 / 4)
    assert lifted["too far"] == pytest.approx(1.0 + 0.4 / 4)
    assert lifted["unplaced"] == 1.0


def test_weight_zero_leaves_the_ranking_as_it_was(settings):
    settings.RANK_NEIGHBOURHOOD_WEIGHT = 0.0
    scores = {"a": 0.3, "b": 0.9}
    assert lift(scores, {"a": ("t", 0, None), "b": ("t", 1, None)}) == scores


# ---- places, written with the note -------------------------------------------------------


def _note(bob, text, sender, at=None):
    return note_create(architect=bob, text=text, scope=[], sender=sender, run=None, at=at)


@pytest.mark.django_db
def test_a_note_knows_its_conversation_and_place(bob, settings):
    a0 = _note(bob, "Anna: I bought a violin.", "a")
    b0 = _note(bob, "Boris: Nice weather.", "b")
    a1 = _note(bob, "Anna: It was cheap.", "a")
    a2 = _note(bob, "Anna: I play it daily.", "a")
    gap = timezone.timedelta(seconds=settings.NOTES_CONTEXT_GAP_SECONDS + 1)
    a_later = _note(bob, "Anna: New topic.", "a", at=a2.created_at + gap)
    got = {n.pk: (n.talk, n.position) for n in Note.objects.filter(architect=bob)}
    assert got[a0.pk] == (a0.pk, 0)
    assert got[a1.pk] == (a0.pk, 1)
    assert got[a2.pk] == (a0.pk, 2)
    assert got[b0.pk] == (b0.pk, 0)  # another sender, another conversation
    assert got[a_later.pk] == (a_later.pk, 0)  # after a gap, a new one
    Note.objects.filter(architect=bob).update(talk=None, position=0)
    reindex(bob.pk)  # the rule applied afresh to old notes gives the same places
    assert {n.pk: (n.talk, n.position) for n in Note.objects.filter(architect=bob)} == got


# ---- both levels rank by it --------------------------------------------------------------

FILLER = ["Let us talk later.", "The train was late.", "Anyway, see you."]


def _twin_conversations(bob):
    """Two conversations holding the same reply and the same fillers (so BM25 scores the two
    replies alike, context included); only in the first is the topic raised three notes
    earlier, beyond the two neighbours BM25 reads. The second is told later, so without the
    lift it would win the tie (newer first)."""
    opener = _note(bob, "We glazed pottery on Elm street.", "a")
    first = [_note(bob, t, "a") for t in FILLER]
    reply_a = _note(bob, "I made a blue bowl.", "a")
    _note(bob, "Nothing much happened.", "b")
    second = [_note(bob, t, "b") for t in FILLER]
    reply_b = _note(bob, "I made a blue bowl.", "b")
    assert first and second
    return opener, reply_a, reply_b


def _ctx(bob, text):
    return RecallContext.of(architect=bob, text=text, scope=[], lang="en", run=None)


@pytest.mark.django_db
def test_level_1_puts_the_reply_where_the_topic_was_raised_first(bob, settings):
    _, reply_a, reply_b = _twin_conversations(bob)
    question = "What blue bowl did they make at pottery?"
    ctx = _ctx(bob, question)
    tables_level.search(ctx)
    order = [item["note"] for item in ctx.level1_ranked]
    assert order.index(str(reply_a.pk)) < order.index(str(reply_b.pk))
    settings.RANK_NEIGHBOURHOOD_WEIGHT = 0.0  # the tie falls to the newer without the lift
    ctx = _ctx(bob, question)
    tables_level.search(ctx)
    order = [item["note"] for item in ctx.level1_ranked]
    assert order.index(str(reply_b.pk)) < order.index(str(reply_a.pk))


@pytest.mark.django_db
def test_level_4_lifts_the_fused_list_by_the_same_rule(bob, settings):
    opener, reply_a, reply_b = _twin_conversations(bob)
    fused = [
        {"id": f"notes:{n.pk}", "note": str(n.pk), "fused": score, "answers": False}
        for n, score in ((reply_b, 1.0), (reply_a, 1.0), (opener, 0.8))
    ]
    ranked = vectors_level._lifted([dict(i) for i in fused], _ctx(bob, "blue bowl"))
    assert [i["note"] for i in ranked][:2] == [str(reply_a.pk), str(reply_b.pk)]
    width, weight = settings.RANK_NEIGHBOURHOOD_NOTES, settings.RANK_NEIGHBOURHOOD_WEIGHT
    assert ranked[0]["fused"] == pytest.approx(1.0 + weight * 0.8 / (2 * width), abs=1e-5)
    assert ranked[1]["fused"] == 1.0
