"""Reading the grown shape: the catalog, and the rows behind it. One architect at a time."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from memory import scope as scopes
from memory.models import Architect, Note, ShapeEntry, ValueKeyword
from memory.shape import physical
from memory.shape.physical import ROOT_TABLE, VALUE


def catalog(architect: Architect) -> list[ShapeEntry]:
    return list(ShapeEntry.objects.filter(architect=architect).order_by("kind", "table", "name"))


def catalog_summary(architect: Architect) -> list[dict[str, Any]]:
    """The catalog as a model reads it: tables with their columns, and the root's kinds."""
    entries = catalog(architect)
    tables = [e for e in entries if e.kind == "table"]
    out: list[dict[str, Any]] = [
        {
            "table": "root",
            "name": ROOT_TABLE,
            "kinds": [
                {"label": c.label, "labels": c.labels, "name": c.name}
                for c in entries
                if c.kind == "column" and c.table == ROOT_TABLE and c.promoted_to_id is None
            ],
        }
    ]
    for table in tables:
        out.append(
            {
                "table": table.label,
                "labels": table.labels,
                "name": table.table,
                "kinds": [
                    {"label": c.label, "labels": c.labels, "name": c.name}
                    for c in entries
                    if c.kind == "column" and c.table == table.table
                ],
            }
        )
    return out


def _basis(raw: str | None) -> Any:
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _cell(row: Any, name: str) -> dict[str, Any] | None:
    value = getattr(row, f"v_{name}")
    if value is None:
        return None
    return {
        "value": value,
        "claim": getattr(row, f"k_{name}"),
        "basis": _basis(getattr(row, f"b_{name}")),
    }


def _columns(architect: Architect, table: str) -> list[ShapeEntry]:
    return list(ShapeEntry.objects.filter(architect=architect, kind="column", table=table))


def table_rows(
    architect: Architect,
    table: ShapeEntry,
    only: Iterable[int] | None = None,
    attributes: Sequence[ShapeEntry] | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Rows of one list table, the architect's only, oldest first; ``only`` narrows to row ids.

    ``attributes`` are the table's column entries when the caller already holds the catalog.
    """
    if attributes is None:
        attributes = _columns(architect, table.table)
    model = physical.list_model(table.name, [a.name for a in attributes])
    query = model.objects.filter(architect_id=architect.pk).order_by("created_at", "id")
    if only is not None:
        query = query.filter(pk__in=list(only))
    if limit is not None:
        query = query[:limit]
    rows = []
    for row in query:
        cell = _cell(row, VALUE) or {"value": None, "claim": None, "basis": None}
        fields = {a.label: c for a in attributes if (c := _cell(row, a.name)) is not None}
        rows.append({"row": row.pk, **cell, "at": row.created_at.isoformat(), "fields": fields})
    return rows


def root_values(architect: Architect, kinds: Sequence[ShapeEntry]) -> dict[str, dict[str, Any]]:
    """The architect's single values of the given root kinds, by label (missing ones left out)."""
    kinds = [k for k in kinds if k.table == ROOT_TABLE and k.promoted_to_id is None]
    if not kinds or not physical.table_exists(ROOT_TABLE):
        return {}
    model = physical.root_model([k.name for k in kinds])
    row = model.objects.filter(architect_id=architect.pk).first()
    if row is None:
        return {}
    return {k.label: c for k in kinds if (c := _cell(row, k.name)) is not None}


@dataclass
class ValueHit:
    entry: ShapeEntry
    row: int
    lemmas: set[str]


def value_hits(architect: Architect, lemmas: Sequence[str]) -> list[ValueHit]:
    """Stored values that share lemmas with a question, by (catalog entry, row)."""
    hits: dict[tuple[int, int], ValueHit] = {}
    rows = ValueKeyword.objects.filter(architect=architect, lemma__in=list(lemmas)).select_related(
        "entry"
    )
    for vk in rows:
        hit = hits.setdefault((vk.entry_id, vk.row), ValueHit(vk.entry, vk.row, set()))
        hit.lemmas.add(vk.lemma)
    return list(hits.values())


# --- where a stored value holds ------------------------------------------------------------------

K = TypeVar("K")


def written_in(architect: Architect, bases: Mapping[K, Any]) -> dict[K, list[dict[str, Any]]]:
    """Where each value holds, by key: the scope of the remember whose run wrote it (the cell's
    basis names the run; the run's note keeps the request's scope). A value no remember wrote,
    or whose run kept no note, has none: unknown where, never everywhere (PASSPORT.md §15)."""
    run_of = {
        key: str(basis["run"])
        for key, basis in bases.items()
        if isinstance(basis, dict) and basis.get("run")
    }
    if not run_of:
        return {key: [] for key in bases}
    noted: dict[str, list[dict[str, Any]]] = {}
    for run_id, note_scope in (
        Note.objects.filter(architect=architect, run_id__in=set(run_of.values()))
        .order_by("created_at")
        .values_list("run_id", "scope")
    ):
        noted.setdefault(str(run_id), note_scope or [])
    return {key: noted.get(run_of.get(key, ""), []) for key in bases}


def in_scope(
    value: dict[str, Any], stored: list[dict[str, Any]], asked: Sequence[dict[str, Any]]
) -> dict[str, Any] | None:
    """One stored value under the one scope rule (``memory.scope``): None when it cannot hold
    where and when asked; otherwise the value with its scope, and the dimensions the question
    names that it is not bound on (``scope_unknown``) or that it is bound on and the question
    does not name (``scope_missing``) — either makes an answer from it parameter-dependent."""
    if not scopes.fits(stored, asked):
        return None
    out = {**value, "scope": stored}
    if unknown := scopes.unknown(stored, asked):
        out["scope_unknown"] = unknown
    if missing := scopes.missing([stored], asked):
        out["scope_missing"] = missing
    return out


def in_scope_all(
    architect: Architect, values: Mapping[K, dict[str, Any]], asked: Sequence[dict[str, Any]]
) -> dict[K, dict[str, Any]]:
    """The values (rows by id, root cells by label) that may hold where and when asked, each
    with its scope marked; the others are left out."""
    where = written_in(architect, {key: value.get("basis") for key, value in values.items()})
    return {
        key: kept
        for key, value in values.items()
        if (kept := in_scope(value, where[key], asked)) is not None
    }
