"""Reading the grown shape: the catalog, and the rows behind it. One architect at a time."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memory.models import Architect, ShapeEntry, ValueKeyword
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
