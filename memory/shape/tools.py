"""The three write tools of the relational store: three physical methods (PASSPORT.md §11).

- ``write_value`` — UPDATE in place; the shape does not grow.
- ``make_new_kind`` — ALTER TABLE ADD COLUMN ×3 (the value, the kind of claim, the basis), then
  the value is written.
- ``promote_to_list`` — CREATE TABLE linked to the root row, MOVE the former single value in
  with its own time, clear the root field; when the list already exists, append to it (a branch
  of the same tool, reported as such).

Each returns the write report of PASSPORT.md §6. Every row carries its architect and every statement
filters by it. Nothing is ever dropped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import models, transaction
from django.utils import timezone

from memory import language
from memory.errors import MemoryServiceError
from memory.models import Architect, Run, ShapeEntry, ValueKeyword
from memory.shape import names, physical
from memory.shape.claims import CLAIMS
from memory.shape.physical import ROOT_TABLE, VALUE


class ShapeError(MemoryServiceError):
    code = "shape_error"
    status = 400


@dataclass
class TableChange:
    table: str
    label: str
    action: str
    rows: int = 0
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        out = {"table": self.table, "label": self.label, "action": self.action, "rows": self.rows}
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class WriteReport:
    """Which tables got what, which tables were created, which new tables received rows."""

    tables: list[TableChange] = field(default_factory=list)
    tables_created: list[str] = field(default_factory=list)
    new_tables_filled: list[str] = field(default_factory=list)

    def merge(self, other: WriteReport) -> WriteReport:
        self.tables += other.tables
        self.tables_created += [t for t in other.tables_created if t not in self.tables_created]
        self.new_tables_filled += [
            t for t in other.new_tables_filled if t not in self.new_tables_filled
        ]
        return self

    def as_dict(self) -> dict[str, Any]:
        return {
            "tables": [t.as_dict() for t in self.tables],
            "tables_created": list(self.tables_created),
            "new_tables_filled": list(self.new_tables_filled),
        }


@dataclass(frozen=True)
class Item:
    """One element appended to a list: its value and, optionally, named attributes."""

    value: str
    fields: Mapping[str, str] = field(default_factory=dict)
    claim: str | None = None


# --- reading the catalog -------------------------------------------------------------------------


def _columns(architect: Architect, table: str) -> list[ShapeEntry]:
    return list(ShapeEntry.objects.filter(architect=architect, kind="column", table=table))


def _tables(architect: Architect) -> list[ShapeEntry]:
    return list(ShapeEntry.objects.filter(architect=architect, kind="table"))


def _as_names(entries: Sequence[ShapeEntry]) -> list[names.Name]:
    return [names.Name(label=e.label, name=e.name, key=e.key) for e in entries]


def _find(entries: Sequence[ShapeEntry], name: names.Name) -> ShapeEntry:
    return next(e for e in entries if e.name == name.name)


def table_entry(architect: Architect, label: str) -> ShapeEntry:
    tables = _tables(architect)
    name = names.check(label, existing=_as_names(tables))
    if not name.reused:
        raise ShapeError(
            f"there is no table «{label}»; promote_to_list creates one",
            code="table_not_found",
            details={"label": label},
        )
    return _find(tables, name)


def _model_for(table: str, kinds: Sequence[str]) -> type[models.Model]:
    if table == ROOT_TABLE:
        return physical.root_model(kinds)
    return physical.list_model(table.removeprefix(names.TABLE_PREFIX), kinds)


def _lemmas(label: str) -> list[str]:
    return language.keywords(label.replace("_", " "))


def _remember_label(entry: ShapeEntry, label: str) -> None:
    if label not in entry.labels:
        entry.labels = [*entry.labels, label]
        entry.lemmas = sorted(set(entry.lemmas) | set(_lemmas(label)))
        entry.save(update_fields=["labels", "lemmas"])


def _new_entry(
    architect: Architect, kind: str, table: str, name: names.Name, run: Run | None
) -> ShapeEntry:
    return ShapeEntry.objects.create(
        architect=architect,
        kind=kind,
        table=table,
        name=name.name,
        labels=[name.label],
        key=name.key,
        lemmas=_lemmas(name.label),
        scheme=names.SCHEME_NAME,
        run=run,
    )


# --- writing values ------------------------------------------------------------------------------


def _check_claim(claim: str) -> None:
    if claim not in CLAIMS:
        raise ShapeError(
            f"kind of claim {claim!r} is not one of: {', '.join(CLAIMS)}", code="bad_claim"
        )


def _basis(text: str, run: Run | None, at: datetime | None = None) -> str:
    return json.dumps(
        {
            "text": text,
            "run": str(run.pk) if run else None,
            "at": (at or timezone.now()).isoformat(),
        },
        ensure_ascii=False,
    )


def _index(architect: Architect, entry: ShapeEntry, row: int, value: str | None) -> None:
    ValueKeyword.objects.filter(entry=entry, row=row).delete()
    if value:
        ValueKeyword.objects.bulk_create(
            [
                ValueKeyword(architect=architect, entry=entry, row=row, lemma=lemma)
                for lemma in language.keywords(value)
            ]
        )


def _root_row(architect: Architect) -> int:
    model = physical.root_model()
    row, _ = model.objects.get_or_create(architect_id=architect.pk)
    return row.pk


def _set(
    architect: Architect,
    entry: ShapeEntry,
    value: str,
    claim: str,
    basis: str,
    run: Run | None,
    row: int | None,
) -> int:
    """UPDATE one kind's three columns of the architect's root row, or of one list row."""
    model = _model_for(entry.table, [entry.name])
    values = {
        f"v_{entry.name}": value,
        f"k_{entry.name}": claim,
        f"b_{entry.name}": _basis(basis, run),
    }
    if entry.table == ROOT_TABLE:
        target = _root_row(architect)
    elif row is None:
        raise ShapeError(
            f"«{entry.label}» is a column of a list: name the row", code="row_required"
        )
    else:
        target = row
    updated = model.objects.filter(architect_id=architect.pk, pk=target).update(**values)
    if updated == 0:
        raise ShapeError(f"there is no row {target} in «{entry.table}»", code="row_not_found")
    _index(architect, entry, target, value)
    return updated


def _where(architect: Architect, table: str | None) -> tuple[str, str]:
    if table is None:
        return ROOT_TABLE, "root"
    entry = table_entry(architect, table)
    return entry.table, entry.label


def _existing_kind(
    architect: Architect, table: str, kind: str
) -> tuple[names.Name, list[ShapeEntry]]:
    columns = _columns(architect, table)
    return names.check(kind, existing=_as_names(columns)), columns


def _existing(columns: Sequence[ShapeEntry], name: names.Name, label: str) -> ShapeEntry:
    """An existing kind, ready for a single value: never one that has become a list."""
    entry = _find(columns, name)
    if entry.promoted_to_id is not None:
        raise ShapeError(
            f"«{entry.label}» is a list now (table {entry.promoted_to.table}); "
            "promote_to_list appends to it",
            code="kind_is_list",
        )
    _remember_label(entry, label)
    return entry


def _kind(
    editor: Any,
    architect: Architect,
    where: str,
    where_label: str,
    label: str,
    columns: list[ShapeEntry],
    run: Run | None,
    report: WriteReport,
) -> ShapeEntry:
    """Reuse the kind a label names, or grow it (ALTER TABLE ADD COLUMN ×3) — one rule for
    ``make_new_kind`` and for the attributes ``promote_to_list`` gives its rows."""
    name = names.check(label, existing=_as_names(columns))
    if name.reused:
        entry = _existing(columns, name, label)
        report.tables.append(
            TableChange(where, where_label, "kind_exists", note=f"«{entry.label}» = {entry.name}")
        )
        return entry
    added = physical.ensure_kind_columns(editor, where, name.name)
    entry = _new_entry(architect, "column", where, name, run)
    columns.append(entry)
    trio = f"{name.name}, {name.name}{names.KIND_SUFFIX}, {name.name}{names.BASIS_SUFFIX}"
    report.tables.append(
        TableChange(
            where,
            where_label,
            "add_columns" if added else "add_kind",
            note=trio if added else f"{trio} (columns already present)",
        )
    )
    return entry


WRITERS = ("write_value", "make_new_kind", "promote_to_list")


def write_value(
    *,
    architect: Architect,
    kind: str,
    value: str,
    claim: str = "stated",
    basis: str = "",
    table: str | None = None,
    row: int | None = None,
    run: Run | None = None,
) -> WriteReport:
    """UPDATE in place. The kind must exist; the shape does not grow."""
    _check_claim(claim)
    with transaction.atomic():
        where, where_label = _where(architect, table)
        name, columns = _existing_kind(architect, where, kind)
        if not name.reused:
            raise ShapeError(
                f"there is no kind «{kind}» in {where_label}; make_new_kind creates one",
                code="kind_not_found",
                details={"label": kind},
            )
        entry = _existing(columns, name, kind)
        rows = _set(architect, entry, str(value), claim, basis, run, row)
    return WriteReport(tables=[TableChange(where, where_label, "update", rows, note=entry.name)])


def make_new_kind(
    *,
    architect: Architect,
    kind: str,
    value: str,
    claim: str = "stated",
    basis: str = "",
    table: str | None = None,
    row: int | None = None,
    run: Run | None = None,
) -> WriteReport:
    """ALTER TABLE ADD COLUMN ×3 (value, kind of claim, basis), then write the value.

    If the kind already exists (for this architect, or created a moment ago by a concurrent
    call), no column is added and the value is written in place — and the report says so.
    """
    _check_claim(claim)
    report = WriteReport()
    with physical.growth() as editor:
        physical.ensure_root(editor)
        where, where_label = _where(architect, table)
        columns = _columns(architect, where)
        entry = _kind(editor, architect, where, where_label, kind, columns, run, report)
        rows = _set(architect, entry, str(value), claim, basis, run, row)
        report.tables.append(TableChange(where, where_label, "update", rows, note=entry.name))
    return report


def promote_to_list(
    *,
    architect: Architect,
    kind: str,
    items: Sequence[Item | Mapping[str, Any] | str] = (),
    claim: str = "stated",
    basis: str = "",
    run: Run | None = None,
    allow_empty: bool = False,
) -> WriteReport:
    """CREATE TABLE for a kind that became a set, move its former single value in, append items.

    When the list table already exists this is the append branch of the same tool. Attributes
    named in items' ``fields`` become columns of the list (the ``make_new_kind`` path).
    ``allow_empty`` creates a table with no rows: a caller demanded the table by parameter.
    """
    _check_claim(claim)
    parsed = [_item(i) for i in items]
    for item in parsed:
        if item.claim is not None:
            _check_claim(item.claim)
    report = WriteReport()
    with physical.growth() as editor:
        physical.ensure_root(editor)
        tables = _tables(architect)
        name = names.check(kind, existing=_as_names(tables))
        table = physical.table_name(name.name)
        root_id = _root_row(architect)
        if name.reused:
            entry = _find(tables, name)
            _remember_label(entry, kind)
            created = False
        else:
            built = physical.ensure_list_table(editor, name.name)
            entry = _new_entry(architect, "table", table, name, run)
            created = True
            report.tables_created.append(table)
            report.tables.append(
                TableChange(
                    table,
                    name.label,
                    "create",
                    note="" if built else "physical table already present",
                )
            )
        moved = _move_former_value(architect, entry, name, root_id, report)
        if not parsed and not moved and created and not allow_empty:
            raise ShapeError(
                f"nothing to list under «{kind}»: no items and no former value",
                code="nothing_to_list",
            )
        attributes = _ensure_attributes(editor, architect, entry, parsed, run, report)
        model = physical.list_model(entry.name, [a.name for a in attributes.values()])
        now = timezone.now()
        for item in parsed:
            item_claim = item.claim or claim
            values: dict[str, Any] = {
                "architect_id": architect.pk,
                "root_id": root_id,
                "created_at": now,
                f"v_{VALUE}": item.value,
                f"k_{VALUE}": item_claim,
                f"b_{VALUE}": _basis(basis, run, now),
            }
            for label, attribute_value in item.fields.items():
                attribute = attributes[label]
                values[f"v_{attribute.name}"] = attribute_value
                values[f"k_{attribute.name}"] = item_claim
                values[f"b_{attribute.name}"] = _basis(basis, run, now)
            row = model.objects.create(**values)
            _index(architect, entry, row.pk, item.value)
            for label, attribute_value in item.fields.items():
                _index(architect, attributes[label], row.pk, attribute_value)
        if parsed:
            report.tables.append(
                TableChange(table, entry.label, "insert" if created else "append", len(parsed))
            )
        if created and (parsed or moved):
            report.new_tables_filled.append(table)
    return report


def _item(raw: Item | Mapping[str, Any] | str) -> Item:
    if isinstance(raw, Item):
        return raw
    if isinstance(raw, str):
        return Item(value=raw)
    if not isinstance(raw, Mapping) or "value" not in raw:
        raise ShapeError("an item is a text or an object with 'value'", code="bad_item")
    fields = raw.get("fields") or {}
    if not isinstance(fields, Mapping):
        raise ShapeError("an item's 'fields' is an object of label → value", code="bad_item")
    return Item(
        value=str(raw["value"]),
        fields={str(k): str(v) for k, v in fields.items()},
        claim=raw.get("claim"),
    )


def _move_former_value(
    architect: Architect,
    table_entry: ShapeEntry,
    name: names.Name,
    root_id: int,
    report: WriteReport,
) -> bool:
    """Move the root kind this list grew from: its value goes in with its own time."""
    former = next(
        (
            c
            for c in _columns(architect, ROOT_TABLE)
            if (c.key == name.key or c.name == name.name) and c.promoted_to_id is None
        ),
        None,
    )
    if former is None:
        return False
    root = physical.root_model([former.name])
    row = root.objects.get(pk=root_id)
    value = getattr(row, f"v_{former.name}")
    moved = False
    if value is not None:
        claim = getattr(row, f"k_{former.name}") or "stated"
        basis = getattr(row, f"b_{former.name}") or _basis("", None)
        at = _basis_time(basis)
        listed = physical.list_model(table_entry.name).objects.create(
            architect_id=architect.pk,
            root_id=root_id,
            created_at=at,
            v_value=value,
            k_value=claim,
            b_value=basis,
        )
        _index(architect, table_entry, listed.pk, value)
        root.objects.filter(pk=root_id, architect_id=architect.pk).update(
            **{f"v_{former.name}": None, f"k_{former.name}": None, f"b_{former.name}": None}
        )
        ValueKeyword.objects.filter(entry=former, row=root_id).delete()
        moved = True
        report.tables.append(
            TableChange(
                ROOT_TABLE, "root", "clear", 1, note=f"{former.name} moved to {table_entry.table}"
            )
        )
        report.tables.append(
            TableChange(
                table_entry.table,
                table_entry.label,
                "move",
                1,
                note=f"former value of {former.name}, with its time {at.isoformat()}",
            )
        )
    former.promoted_to = table_entry
    former.save(update_fields=["promoted_to"])
    return moved


def _basis_time(basis: str) -> datetime:
    try:
        return datetime.fromisoformat(json.loads(basis)["at"])
    except (ValueError, KeyError, TypeError):
        return timezone.now()


def _ensure_attributes(
    editor: Any,
    architect: Architect,
    table_entry: ShapeEntry,
    items: Sequence[Item],
    run: Run | None,
    report: WriteReport,
) -> dict[str, ShapeEntry]:
    """Each attribute label named by the items becomes (or reuses) a column of the list."""
    columns = _columns(architect, table_entry.table)
    return {
        label: _kind(
            editor, architect, table_entry.table, table_entry.label, label, columns, run, report
        )
        for label in dict.fromkeys(label for item in items for label in item.fields)
    }
