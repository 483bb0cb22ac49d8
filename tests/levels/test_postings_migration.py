"""Migrations 0019 and 0020 give the postings already written their notes' document lengths and
sizes: a memory upgraded in place ranks and supersedes as one written after it
(``memory.knowledge.lookup`` and ``memory.knowledge.supersede`` read them from the postings)."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("memory", "0018_index_statistics")]
AFTER = [("memory", "0019_postings_carry_lengths")]


def _migrate(target):  # type: ignore[no-untyped-def]
    """The database migrated to ``target`` (None: the newest), and the models as they were
    there."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    target = target or executor.loader.graph.leaf_nodes()
    executor.migrate(target)
    return executor.loader.project_state(target).apps


@pytest.mark.django_db(transaction=True)
def test_the_migration_copies_each_notes_lengths_into_its_postings():
    old = _migrate(BEFORE)
    Architect = old.get_model("memory", "Architect")
    Note = old.get_model("memory", "Note")
    NoteKeyword = old.get_model("memory", "NoteKeyword")
    architect = Architect.objects.create(name="upgraded")
    lengths = {}
    for i, (length, near) in enumerate([(3, 0), (5, 7), (2, 11)]):
        note = Note.objects.create(
            id=uuid.uuid4(),
            architect=architect,
            text=f"note {i}",
            sender="s",
            length=length,
            near_length=near,
        )
        lengths[note.pk] = (length, near)
        for lemma in ("lake", f"word{i}"):
            NoteKeyword.objects.create(architect=architect, note=note, lemma=lemma, own=1)

    new = _migrate(AFTER)
    postings = new.get_model("memory", "NoteKeyword").objects.values_list(
        "note_id", "length", "near_length"
    )
    assert len(postings) == 6
    assert all(lengths[note] == (length, near) for note, length, near in postings)

    _migrate(None)  # the test database as it was


@pytest.mark.django_db(transaction=True)
def test_the_migration_counts_each_notes_own_terms_into_its_own_postings():
    before = [("memory", "0019_postings_carry_lengths")]
    after = [("memory", "0020_supersession_by_size")]
    old = _migrate(before)
    Architect = old.get_model("memory", "Architect")
    Note = old.get_model("memory", "Note")
    NoteKeyword = old.get_model("memory", "NoteKeyword")
    architect = Architect.objects.create(name="upgraded")
    expected = {}
    for i, (own, near) in enumerate([(3, 0), (1, 2), (5, 1)]):
        note = Note.objects.create(id=uuid.uuid4(), architect=architect, text=f"n{i}", sender="s")
        for j in range(own):
            NoteKeyword.objects.create(architect=architect, note=note, lemma=f"o{j}", own=1)
            expected[(note.pk, f"o{j}")] = own
        for j in range(near):  # context-only postings stay 0
            NoteKeyword.objects.create(architect=architect, note=note, lemma=f"c{j}", own=0)
            expected[(note.pk, f"c{j}")] = 0

    new = _migrate(after)
    postings = new.get_model("memory", "NoteKeyword").objects.values_list(
        "note_id", "lemma", "terms"
    )
    assert {(note, lemma): terms for note, lemma, terms in postings} == expected

    _migrate(None)  # the test database as it was
