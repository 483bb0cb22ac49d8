"""Level 1: the relational store, no model. Keywords built by code meet the stored lemmas.

Two sources, both read with parameterised SELECTs:
- the grown shape: a question's lemmas meet catalog labels (a table or a kind named like what is
  asked) and stored values (a row holding what is asked); matched tables return their rows,
  narrowed to the rows whose values matched;
- the verbatim notes.

An answer needs at least half of the question's content lemmas: all of them → ``affirmative``;
some → ``probabilistic``. A note bound to a place or a date the question does not give makes the
answer ``parameter_dependent``, naming what is missing and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory import scope as scopes
from memory.i18n import Text
from memory.ladder import Kind, Outcome, ReportEntry
from memory.levels.context import RecallContext
from memory.models import ShapeEntry
from memory.services.notes import NoteHit, notes_search
from memory.shape import selectors
from memory.shape.physical import ROOT_TABLE

MIN_COVERAGE = 0.5
MAX_RETURNED = 10
MAX_ROWS = 50

_NO_WORDS = Text(
    ru="в вопросе нет слов, по которым можно искать",
    en="the question has no content words to search by",
)
_NOTHING = Text(
    ru="ни одна заметка не совпала по словам: {words}", en="no note shares the words: {words}"
)
_WEAK = Text(
    ru="совпадения слабые (меньше половины слов вопроса): {words}",
    en="matches are weak (less than half of the question's words): {words}",
)
_MATCHED = Text(ru="совпали слова: {words}", en="matched words: {words}")
_FOUND = Text(ru="Найдено в заметках ({count}):", en="Found in notes ({count}):")
_FOUND_TABLES = Text(ru="Найдено в таблицах памяти:", en="Found in the memory's tables:")
_OUT_OF_SCOPE = Text(
    ru="заметки есть, но их охват не совпал с охватом вопроса",
    en="notes exist, but their scope does not fit the question's scope",
)
_NO_TABLE = Text(
    ru="ни одна таблица или колонка не названа так, как спрошено, и ни одно значение не совпало",
    en="no table or kind is named like the question and no stored value matches",
)
_MORE = Text(
    ru="показаны первые {shown} строк, есть ещё", en="the first {shown} rows shown, there are more"
)
_ROOT_LABEL = Text(ru="архитектор", en="architect")
_DEPENDS = {
    "geo": Text(
        ru="Ответ зависит от места, а место неизвестно: заметки привязаны к {values}.",
        en="The answer depends on the place, and the place is unknown: the notes are bound to {values}.",
    ),
    "calendar": Text(
        ru="Ответ зависит от даты, а дата неизвестна: заметки привязаны к {values}.",
        en="The answer depends on the date, and the date is unknown: the notes are bound to {values}.",
    ),
}


def _kind_for(coverage: float) -> Kind:
    return "affirmative" if coverage >= 1.0 else "probabilistic"


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
    return shared if own and len(shared) / len(own) >= MIN_COVERAGE else set()


def _grown(ctx: RecallContext) -> tuple[dict[str, Any] | None, list[ReportEntry], set[str], Kind]:
    asked = set(ctx.keywords)
    entries = selectors.catalog(ctx.architect)
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
    for hit in selectors.value_hits(ctx.architect, ctx.keywords):
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
    coverage = len(matched) / len(asked)
    report: list[ReportEntry] = []
    if coverage < MIN_COVERAGE:
        report.append(ReportEntry(1, "tables", "catalog", "empty", note=_NO_TABLE(ctx.lang)))
        return None, report, matched, "probabilistic"
    kind = _kind_for(coverage)

    data: dict[str, Any] = {"tables": []}
    if root_kinds:
        values = selectors.root_values(ctx.architect, [e for e, _ in root_kinds.values()])
        words = sorted(set().union(*(s for _, s in root_kinds.values())))
        report.append(
            ReportEntry(
                1,
                "tables",
                ROOT_TABLE,
                "answered" if values else "empty",
                returned=len(values),
                kind=kind if values else None,
                note=_MATCHED(ctx.lang, words=", ".join(words)),
            )
        )
        if values:
            data["tables"].append(
                {"table": _ROOT_LABEL(ctx.lang), "name": ROOT_TABLE, "values": values}
            )
    for match in matches.values():
        attributes = [e for e in entries if e.kind == "column" and e.table == match.entry.table]
        rows = selectors.table_rows(
            ctx.architect, match.entry, only=match.rows, attributes=attributes, limit=MAX_ROWS + 1
        )
        more = len(rows) > MAX_ROWS
        rows = rows[:MAX_ROWS]
        report.append(
            ReportEntry(
                1,
                "tables",
                match.entry.table,
                "answered" if rows else "empty",
                returned=len(rows),
                kind=kind if rows else None,
                note=f"«{match.entry.label}»: "
                + _MATCHED(ctx.lang, words=", ".join(sorted(match.lemmas)))
                + (f"; {_MORE(ctx.lang, shown=MAX_ROWS)}" if more else ""),
            )
        )
        if rows:
            data["tables"].append(
                {"table": match.entry.label, "name": match.entry.table, "rows": rows, "more": more}
            )
    if not data["tables"]:
        return None, report, matched, kind
    return data, report, matched, kind


def _cell_text(cell: dict[str, Any]) -> str:
    return f"{cell['value']} [{cell['claim']}]"


def _tables_text(data: dict[str, Any], lang: str) -> list[str]:
    lines = [_FOUND_TABLES(lang)]
    for table in data["tables"]:
        if "values" in table:
            parts = [f"{label}: {_cell_text(cell)}" for label, cell in table["values"].items()]
        else:
            parts = []
            for row in table["rows"]:
                fields = ", ".join(f"{k}: {_cell_text(v)}" for k, v in row["fields"].items())
                parts.append(_cell_text(row) + (f" ({fields})" if fields else ""))
        more = f" … ({_MORE(lang, shown=len(parts))})" if table.get("more") else ""
        lines.append(f"{table['table']}: " + "; ".join(parts) + more)
    return lines


# --- the notes ---------------------------------------------------------------------------------


def _note_data(hit: NoteHit) -> dict[str, Any]:
    return {
        "note": str(hit.note.pk),
        "text": hit.note.text,
        "scope": hit.note.scope,
        "created_at": hit.note.created_at.isoformat(),
        "sender": hit.note.sender,
        "matched": hit.matched,
        "coverage": round(hit.coverage, 3),
    }


def _line(hit: NoteHit) -> str:
    where = ", ".join(scopes.describe(r) for r in hit.note.scope)
    suffix = f"; {where}" if where else ""
    return f"«{hit.note.text}» ({hit.note.created_at:%Y-%m-%d}{suffix})"


def _notes(ctx: RecallContext) -> tuple[list[NoteHit], ReportEntry, dict[str, Any]]:
    hits = notes_search(architect=ctx.architect, keywords=ctx.keywords)
    ctx.extra["level1_notes"] = [_note_data(h) for h in hits[:MAX_RETURNED]]
    strong = [h for h in hits if h.coverage >= MIN_COVERAGE]
    fitting = [h for h in strong if scopes.fits(h.note.scope, ctx.scope)]
    trace = {
        "level": 1,
        "event": "notes",
        "candidates": len(hits),
        "strong": len(strong),
        "in_scope": len(fitting),
    }
    words = ", ".join(ctx.keywords)
    if not fitting:
        if strong:
            note = _OUT_OF_SCOPE(ctx.lang)
        elif hits:
            note = _WEAK(ctx.lang, words=words)
        else:
            note = _NOTHING(ctx.lang, words=words)
        return [], ReportEntry(1, "tables", "notes", "empty", note=note), trace
    shown = fitting[:MAX_RETURNED]
    matched = sorted({m for h in shown for m in h.matched})
    entry = ReportEntry(
        1,
        "tables",
        "notes",
        "answered",
        returned=len(shown),
        kind=_kind_for(shown[0].coverage),
        note=_MATCHED(ctx.lang, words=", ".join(matched)),
    )
    return shown, entry, trace


def _missing(shown: list[NoteHit], ctx: RecallContext) -> list[dict[str, str]]:
    out = []
    for dimension in scopes.missing((h.note.scope for h in shown), ctx.scope):
        values = sorted(
            {scopes.describe(r) for h in shown for r in scopes.records(h.note.scope, dimension)}
        )
        why = _DEPENDS[dimension](ctx.lang, values=", ".join(values))
        out.append({"parameter": "scope", "dimension": dimension, "why": why})
    return out


# --- the level ---------------------------------------------------------------------------------


def search(ctx: RecallContext) -> Outcome:
    trace: list[dict[str, Any]] = [{"level": 1, "event": "keywords", "keywords": ctx.keywords}]
    if not ctx.keywords:
        entry = ReportEntry(1, "tables", "notes", "empty", note=_NO_WORDS(ctx.lang))
        return Outcome(found=False, report=[entry], trace=trace)

    grown, report, grown_lemmas, grown_kind = _grown(ctx)
    trace.append({"level": 1, "event": "tables", "matched": sorted(grown_lemmas)})
    shown, notes_entry, notes_trace = _notes(ctx)
    report.append(notes_entry)
    trace.append(notes_trace)
    missing = _missing(shown, ctx)

    if grown is not None:
        if shown:
            grown["notes"] = [_note_data(h) for h in shown]
        lines = _tables_text(grown, ctx.lang)
        if shown:
            lines += [_FOUND(ctx.lang, count=len(shown))]
            lines += [f"{i}. {_line(h)}" for i, h in enumerate(shown, 1)]
        return Outcome(
            found=True,
            kind=grown_kind,
            form="data",
            text="\n".join(lines),
            data=grown,
            report=report,
            trace=trace,
            missing=missing,
        )
    if not shown:
        return Outcome(found=False, report=report, trace=trace)

    kind: Kind = "parameter_dependent" if missing else _kind_for(shown[0].coverage)
    notes_entry.kind = kind
    lines = [_FOUND(ctx.lang, count=len(shown))] + [
        f"{i}. {_line(h)}" for i, h in enumerate(shown, 1)
    ]
    lines = [m["why"] for m in missing] + lines
    return Outcome(
        found=True,
        kind=kind,
        form="text",
        text="\n".join(lines),
        data={"notes": [_note_data(h) for h in shown]},
        report=report,
        trace=trace,
        missing=missing,
    )
