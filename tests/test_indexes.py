"""No index of the memory's own tables is a leading part of another: the longer one already
serves every lookup the shorter would, and each extra B-tree is written on every insert (the
postings' two redundant ones were 23% of the disk at 100k notes; PASSPORT.md §18)."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import connection, models


def _partial() -> set[str]:
    """Indexes and unique constraints with a condition: they hold only some rows, so a plain
    index leading them is not redundant."""
    names = set()
    for model in apps.get_app_config("memory").get_models():
        for item in [*model._meta.indexes, *model._meta.constraints]:
            if getattr(item, "condition", None) is not None:
                names.add(item.name)
    return names


def _redundant() -> list[str]:
    partial = _partial()
    found = []
    with connection.cursor() as cursor:
        # The memory's own models (Django's many-to-many tables of the user model are Django's).
        tables = [m._meta.db_table for m in apps.get_app_config("memory").get_models()]
        for table in tables:
            indexes = {
                name: (info["columns"], bool(info["unique"] or info["primary_key"]))
                for name, info in connection.introspection.get_constraints(cursor, table).items()
                if (info["index"] or info["unique"] or info["primary_key"]) and info["columns"]
            }
            for name, (columns, unique) in indexes.items():
                if unique or name.endswith("_like"):
                    # A constraint, not a lookup aid; or PostgreSQL's pattern twin of a text
                    # column (Django names it ``…_like``), which serves LIKE 'x%' as the plain
                    # B-tree does not.
                    continue
                for other, (longer, _) in indexes.items():
                    if (
                        other != name
                        and other not in partial
                        and not other.endswith("_like")
                        and len(longer) >= len(columns)
                        and longer[: len(columns)] == columns
                    ):
                        found.append(f"{table}.{name} {columns} leads {other} {longer}")
    return found


@pytest.mark.django_db
def test_no_index_leads_another_on_the_memory_tables():
    assert _redundant() == []


@pytest.mark.django_db(transaction=True)  # SQLite alters its schema outside a transaction
def test_the_check_finds_an_index_another_leads():
    # The check itself: an index on the postings' architect alone is led by the ranking index.
    from memory.models import NoteKeyword

    index = models.Index(fields=["architect"], name="test_redundant_architect")
    with connection.schema_editor() as editor:
        editor.add_index(NoteKeyword, index)
    try:
        assert any("test_redundant_architect" in line for line in _redundant())
    finally:
        with connection.schema_editor() as editor:
            editor.remove_index(NoteKeyword, index)


@pytest.mark.django_db(transaction=True)
def test_the_migration_drops_the_led_indexes_and_gives_them_back():
    from django.db.migrations.executor import MigrationExecutor

    def migrate(target):  # type: ignore[no-untyped-def]
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(target or executor.loader.graph.leaf_nodes())

    migrate([("memory", "0020_supersession_by_size")])
    try:
        before = _redundant()
        # The fourteen fields' own indexes and the catalog's (architect, kind) one are back.
        assert any("memory_notekeyword" in line and "['note_id']" in line for line in before)
        assert any("shape_entry_by_kind" in line for line in before)
        assert len(before) >= 15
    finally:
        migrate(None)
    assert _redundant() == []
