"""The grown tables as the database sees them: model classes built at run time, real DDL through
Django's schema editor, and the lock that keeps concurrent growth to one set of columns.

Names reaching this module have passed ``memory.shape.names.check``; nothing here builds SQL
from strings: DDL goes through the schema editor, rows through the ORM (parameterised).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from django.apps.registry import Apps
from django.db import connection, models

from memory.shape.names import BASIS_SUFFIX, KIND_SUFFIX, TABLE_PREFIX

ROOT_TABLE = f"{TABLE_PREFIX}root"
APP_LABEL = "memory_grown"
VALUE = "value"
CLAIM_MAX = 16


def table_name(name: str) -> str:
    return f"{TABLE_PREFIX}{name}"


def kind_fields(name: str) -> dict[str, models.Field]:
    """The three columns of one kind: the value, the kind of claim, the basis (provenance)."""
    return {
        f"v_{name}": models.TextField(null=True, db_column=name),
        f"k_{name}": models.CharField(
            max_length=CLAIM_MAX, null=True, db_column=name + KIND_SUFFIX
        ),
        f"b_{name}": models.TextField(null=True, db_column=name + BASIS_SUFFIX),
    }


def _model(apps: Apps, class_name: str, table: str, fields: dict[str, Any]) -> type[models.Model]:
    meta = type(
        "Meta", (), {"apps": apps, "app_label": APP_LABEL, "db_table": table, "managed": False}
    )
    attrs = {"__module__": __name__, "Meta": meta, **fields}
    return type(class_name, (models.Model,), attrs)


def _root(apps: Apps, kinds: Iterable[str]) -> type[models.Model]:
    fields: dict[str, Any] = {
        "id": models.BigAutoField(primary_key=True),
        "architect_id": models.BigIntegerField(unique=True),
    }
    for kind in kinds:
        fields.update(kind_fields(kind))
    return _model(apps, "Root", ROOT_TABLE, fields)


def root_model(kinds: Iterable[str] = ()) -> type[models.Model]:
    """The root table (one row per architect) with the given kinds' columns."""
    return _root_model(tuple(sorted(set(kinds))))


def list_model(name: str, kinds: Iterable[str] = ()) -> type[models.Model]:
    """A list table: each row linked to the root row, with its own value, claim, basis and time."""
    return _list_model(name, tuple(sorted(set(kinds))))


# Model classes are pure functions of (table, columns): cached, so reads do not rebuild them.
@lru_cache(maxsize=1024)
def _root_model(kinds: tuple[str, ...]) -> type[models.Model]:
    return _root(Apps(), kinds)


@lru_cache(maxsize=1024)
def _list_model(name: str, kinds: tuple[str, ...]) -> type[models.Model]:
    apps = Apps()
    root = _root(apps, ())
    fields: dict[str, Any] = {
        "id": models.BigAutoField(primary_key=True),
        "architect_id": models.BigIntegerField(db_index=True),
        "root": models.ForeignKey(root, on_delete=models.PROTECT, db_column="root_id"),
        "created_at": models.DateTimeField(),
        **kind_fields(VALUE),
    }
    for kind in kinds:
        fields.update(kind_fields(kind))
    return _model(apps, f"List_{name}", table_name(name), fields)


# --- what exists --------------------------------------------------------------------------------


def table_exists(table: str) -> bool:
    with connection.cursor() as cursor:
        return table in connection.introspection.table_names(cursor)


def columns_of(table: str) -> set[str]:
    with connection.cursor() as cursor:
        return {c.name for c in connection.introspection.get_table_description(cursor, table)}


# --- growing ------------------------------------------------------------------------------------

_LOCK_ID = int.from_bytes(hashlib.sha256(b"memory.shape").digest()[:8], "big", signed=True)


@contextmanager
def growth() -> Iterator[Any]:
    """One transaction in which the shape may grow, held by one writer at a time.

    PostgreSQL: ``pg_advisory_xact_lock`` on one key taken first thing in the transaction, so
    concurrent growers queue and each sees the DDL the previous one committed (DDL is
    transactional there). SQLite: the connection runs ``BEGIN IMMEDIATE`` (settings), which
    takes the database's write lock at the start, so writers are serialised the same way.
    Either way, existence is checked after the lock is held, so the same kind is added once.

    On SQLite the schema editor must start the transaction itself (it turns foreign-key checks
    off first), so growth cannot run inside an outer ``atomic`` block there.
    """
    with connection.schema_editor() as editor:
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_ID])
        yield editor


def ensure_root(editor: Any) -> None:
    if not table_exists(ROOT_TABLE):
        editor.create_model(root_model())


def ensure_list_table(editor: Any, name: str) -> bool:
    """Create the list table if it is not there; True when it was created now."""
    ensure_root(editor)
    if table_exists(table_name(name)):
        return False
    editor.create_model(list_model(name))
    return True


def ensure_kind_columns(editor: Any, table: str, kind: str) -> bool:
    """Add the kind's three columns (ALTER TABLE ADD COLUMN ×3) unless present; True when added.

    Adding a nullable column with no default is a plain ALTER TABLE on both engines (Django's
    SQLite editor would otherwise rebuild the table), so rows and other columns stay untouched.
    """
    present = columns_of(table)
    added = False
    # A throwaway class naming the table: the cached read models must not gain fields.
    model = _model(Apps(), "Alter", table, {"id": models.BigAutoField(primary_key=True)})
    for attname, field in kind_fields(kind).items():
        if field.db_column in present:
            continue
        field.contribute_to_class(model, attname)
        editor.add_field(model, field)
        added = True
    return added
