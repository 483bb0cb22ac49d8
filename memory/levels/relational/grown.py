"""Level 1's first source: the grown shape. A question's lemmas meet catalog labels (a table or
a kind named like what is asked) and stored values (a row holding what is asked); matched tables
return their rows, narrowed to the rows whose values matched."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory import relevance
from memory import scope as scopes
from memory.i18n import Text
from memory.knowledge.lookup import Look
from memory.ladder import Kind, ReportEntry
from memory.levels.context import RecallContext
from memory.levels.relational.words import MATCHED
from memory.models import ShapeEntry
from memory.shape import selectors
from memory.shape.physical import ROOT_TABLE

LABEL_MIN_SHARE = 0.5  # a label is named when half of its own words are in the question
MAX_ROWS = 50
_FOUND_TABLES = Text(ru="Найдено в таблицах памяти:", en="Found in the memory's tables:")
_MORE = Text(
    ru="показаны первые {shown} строк, есть ещё", en="the first {shown} rows shown, there are more"
)
_NO_TABLE = Text(
    ru="ни одна таблица или колонка не названа так, как спрошено, и ни одно значение не совпало",
    en="no table or kind is named like the question and no stored value matches",
)
_ROOT_LABEL = Text(ru="архитектор", en="architect")


# --- the grown shape ---------------------------------------------------------------------------


@dataclass
class _TableMatch:
    entry: ShapeEntry
    rows: set[int] | None = None  # None: every row
    lemmas: set[str] = field(default_factory=set)
    by_label: bool = False


def _label_matches(entry: ShapeEntry, asked: set[str]) -> set[str]:
    own = set(entry.lemmas)
    shared = own & asked
    return shared if own and len(shared) / len(own) >= LABEL_MIN_SHARE else set()


@dataclass
class _Grown:
    data: dict[str, Any] | None  # the tables that answer, None when none does
    report: list[ReportEntry]
    matched: set[str]
    kind: Kind
    scopes: list[list[dict[str, Any]]] = field(default_factory=list)  # of each value shown
    unknown: list[str] = field(default_factory=list)  # dimensions asked that a value lacks


def _grown(ctx: RecallContext, found: Look) -> _Grown:
    asked = set(ctx.keywords)
    entries = found.catalog
    tables = {e.table: e for e in entries if e.kind == "table"}
    matches: dict[str, _TableMatch] = {}
    root_kinds: dict[int, tuple[ShapeEntry, set[str]]] = {}

    def table_match(table: str) -> _TableMatch | None:
        if table not in tables:
            return None
        return matches.setdefault(table, _TableMatch(tables[table]))

    for entry in entries:
        shared = _label_matches(entry, asked)
        if not shared:
            continue
        if entry.kind == "table" or entry.table != ROOT_TABLE or entry.promoted_to_id:
            target = entry.promoted_to.table if entry.promoted_to_id else entry.table
            match = table_match(target)
            if match is not None:
                match.by_label = True
                match.lemmas |= shared
        else:
            root_kinds[entry.pk] = (entry, shared)

    value_rows: dict[str, set[int]] = {}
    for hit in found.values:
        if hit.entry.table == ROOT_TABLE:
            known = root_kinds.setdefault(hit.entry.pk, (hit.entry, set()))
            known[1].update(hit.lemmas)
            continue
        match = table_match(hit.entry.table)
        if match is not None:
            value_rows.setdefault(hit.entry.table, set()).add(hit.row)
            match.lemmas |= hit.lemmas
    for table, rows in value_rows.items():
        matches[table].rows = rows

    matched = set().union(
        *(m.lemmas for m in matches.values()), *(s for _, s in root_kinds.values())
    )
    coverage = ctx.weights().coverage(ctx.keywords, matched)
    report: list[ReportEntry] = []
    if not relevance.answers(coverage):
        report.append(ReportEntry(1, "tables", "catalog", "empty", note=_NO_TABLE(ctx.lang)))
        return _Grown(None, report, matched, "probabilistic")
    kind = relevance.kind_for(coverage)

    data: dict[str, Any] = {"tables": []}
    if root_kinds:
        stored = selectors.root_values(ctx.architect, [e for e, _ in root_kinds.values()])
        values = selectors.in_scope_all(ctx.architect, stored, ctx.scope)
        words = sorted(set().union(*(s for _, s in root_kinds.values())))
        report.append(
            ReportEntry(
                1,
                "tables",
                ROOT_TABLE,
                "answered" if values else "empty",
                returned=len(values),
                kind=kind if values else None,
                note=MATCHED(ctx.lang, words=", ".join(words))
                + _scoped_out(ctx, len(stored) - len(values)),
            )
        )
        if values:
            data["tables"].append(
                {"table": _ROOT_LABEL(ctx.lang), "name": ROOT_TABLE, "values": values}
            )
    for match in matches.values():
        attributes = [e for e in entries if e.kind == "column" and e.table == match.entry.table]
        # Where a row holds is known only after it is read (its value's run names the note), so
        # a scoped question reads every matching row before the cap: a lone Madrid row after
        # fifty Barcelona ones still answers a Madrid question.
        read = selectors.table_rows(
            ctx.architect,
            match.entry,
            only=match.rows,
            attributes=attributes,
            limit=None if ctx.scope else MAX_ROWS + 1,
        )
        fitting = list(
            selectors.in_scope_all(ctx.architect, {r["row"]: r for r in read}, ctx.scope).values()
        )
        more = len(fitting) > MAX_ROWS
        rows = fitting[:MAX_ROWS]
        report.append(
            ReportEntry(
                1,
                "tables",
                match.entry.table,
                "answered" if rows else "empty",
                returned=len(rows),
                kind=kind if rows else None,
                note=f"«{match.entry.label}»: "
                + MATCHED(ctx.lang, words=", ".join(sorted(match.lemmas)))
                + (f"; {_MORE(ctx.lang, shown=MAX_ROWS)}" if more else "")
                + _scoped_out(ctx, len(read) - len(fitting)),
            )
        )
        if rows:
            data["tables"].append(
                {"table": match.entry.label, "name": match.entry.table, "rows": rows, "more": more}
            )
    if not data["tables"]:
        return _Grown(None, report, matched, kind)
    # A value bound elsewhere never shows; one whose place or date is unknown, or bound where
    # the question did not say, makes the answer parameter-dependent — as notes do.
    shown = [
        value
        for table in data["tables"]
        for value in (table["values"].values() if "values" in table else table["rows"])
    ]
    unknown = sorted({d for value in shown for d in value.get("scope_unknown", [])})
    return _Grown(data, report, matched, kind, [value["scope"] for value in shown], unknown)


_SCOPED_OUT = Text(ru="; {count} вне охвата вопроса", en="; {count} outside the question's scope")


def _scoped_out(ctx: RecallContext, count: int) -> str:
    return _SCOPED_OUT(ctx.lang, count=count) if count > 0 else ""


def _cell_text(cell: dict[str, Any]) -> str:
    return f"{cell['value']} [{cell['claim']}]"


def _where(value: dict[str, Any]) -> str:
    """Where and when a shown value holds, as the notes' lines say it."""
    where = ", ".join(scopes.describe(r) for r in value.get("scope") or [])
    return f" [{where}]" if where else ""


def _tables_text(data: dict[str, Any], lang: str) -> list[str]:
    lines = [_FOUND_TABLES(lang)]
    for table in data["tables"]:
        if "values" in table:
            parts = [
                f"{label}: {_cell_text(cell)}{_where(cell)}"
                for label, cell in table["values"].items()
            ]
        else:
            parts = []
            for row in table["rows"]:
                fields = ", ".join(f"{k}: {_cell_text(v)}" for k, v in row["fields"].items())
                parts.append(_cell_text(row) + (f" ({fields})" if fields else "") + _where(row))
        more = f" … ({_MORE(lang, shown=len(parts))})" if table.get("more") else ""
        lines.append(f"{table['table']}: " + "; ".join(parts) + more)
    return lines
