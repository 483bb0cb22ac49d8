"""Migration 0019 gives the postings already written their notes' document lengths: a memory
upgraded in place ranks as one written after it (``memory.services.lookup`` reads the lengths
from the postings)."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("memory", "0018_index_statistics")]
AFTER = [("memory", "0019_postings_carry_lengths")]


@pytest.mark.django_db(transaction=True)
def test_the_migration_copies_each_notes_lengths_into_its_postings():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
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

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    postings = new.get_model("memory", "NoteKeyword").objects.values_list(
        "note_id", "length", "near_length"
    )
    assert len(postings) == 6
    assert all(lengths[note] == (length, near) for note, length, near in postings)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # the test database as it was
