"""Level 1: the relational store, no model. Keywords built by code meet the stored lemmas.

Two sources, both read with parameterised SELECTs:
- the grown shape: a question's lemmas meet catalog labels (a table or a kind named like what is
  asked) and stored values (a row holding what is asked); matched tables return their rows,
  narrowed to the rows whose values matched;
- the verbatim notes.

The notes are ranked by BM25 over the full-text index (``memory.knowledge.notes``); whether
their list holds the answer is the answer decision's (``memory.decision``, model ``words``), and
the grown shape, objects and summaries answer past the bar of ``memory.relevance`` (the
rarity-weighted share of the question's terms they hold). A note holding all of the question →
``affirmative``, else ``probabilistic``; what does not answer is a candidate that leaves the
climb going. A note bound to a place or a date the
question does not give, or unbound where the question names one, makes the answer
``parameter_dependent``, naming what is missing and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from memory import decision, relevance
from memory import scope as scopes
from memory.i18n import Text
from memory.knowledge import objects as objects_service
from memory.knowledge import summaries, supersede
from memory.knowledge.lookup import Look, NoteHit, look, notes_search
from memory.knowledge.notes import holders_first, lift_notes, places_of
from memory.ladder import KINDS, Kind, Outcome, ReportEntry
from memory.levels.context import RecallContext
from memory.models import MemoryObject, ShapeEntry
from memory.shape import selectors
from memory.shape.physical import ROOT_TABLE

LABEL_MIN_SHARE = 0.5  # a label is named when half of its own words are in the question
MAX_RETURNED = 10
SEARCHED = 40  # ranked notes read (already narrowed to the scope by the query)
MAX_ROWS = 50

_NO_WORDS = Text(
    ru="в вопросе нет слов, по которым можно искать",
    en="the question has no content words to search by",
)
_NOTHING = Text(
    ru="ни одна заметка не совпала по словам: {words}", en="no note shares the words: {words}"
)
_WEAK = Text(
    ru="совпадения ниже порога ответа — это кандидаты, не ответ: {words}",
    en="the matches are below the answer bar — candidates, not an answer: {words}",
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
_HISTORY = Text(ru="заменено более новым (история)", en="replaced by a newer one (history)")
_UNKNOWN = {
    "geo": Text(
        ru="Место, где это верно, не записано; спрошено про {asked}: может быть верно и не там.",
        en="Where this holds was never said; the question is about {asked}: it may not hold there.",
    ),
    "calendar": Text(
        ru="Когда это верно, не записано; спрошено про {asked}: может быть верно и не тогда.",
        en="When this holds was never said; the question is about {asked}: it may not hold then.",
    ),
}
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
                note=_MATCHED(ctx.lang, words=", ".join(words))
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
                + _MATCHED(ctx.lang, words=", ".join(sorted(match.lemmas)))
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


# --- the notes ---------------------------------------------------------------------------------


def note_item(hit: NoteHit, level: int = 1, source: str = "notes") -> dict[str, Any]:
    """One note as answers and candidates show it."""
    return {
        "id": str(hit.note.pk),
        "note": str(hit.note.pk),
        "text": hit.note.text,
        "scope": hit.note.scope,
        "created_at": hit.note.created_at.isoformat(),
        "sender": hit.note.sender,
        "level": level,
        "source": source,
        "score": round(hit.score, 4),
        "matched": hit.matched,
        "near": hit.near,
        "coverage": round(hit.coverage, 3),
        "current": hit.note.superseded_by_id is None,
        "superseded_by": str(hit.note.superseded_by_id) if hit.note.superseded_by_id else None,
    }


def _line(hit: NoteHit, lang: str) -> str:
    where = ", ".join(scopes.describe(r) for r in hit.note.scope)
    suffix = f"; {where}" if where else ""
    history = f" — {_HISTORY(lang)}" if hit.note.superseded_by_id else ""
    return f"«{hit.note.text}» ({hit.note.created_at:%Y-%m-%d}{suffix}){history}"


def _current_first(answering: list[NoteHit], shown: list[NoteHit], ctx: RecallContext) -> None:
    """When the best answer was replaced by a newer note, the newer one answers (in place)."""
    best = answering[0]
    if best.note.superseded_by_id is None:
        return
    newest = supersede.current(best.note)
    if newest.pk == best.note.pk or not scopes.fits(newest.scope, ctx.scope):
        return
    hit = next((h for h in shown if h.note.pk == newest.pk), None)
    if hit is None:
        hit = NoteHit(note=newest, score=0.0, coverage=best.coverage)
        shown.insert(0, hit)
    if hit in answering:
        answering.remove(hit)
    answering.insert(0, hit)


def _current_before_replaced(shown: list[NoteHit], ctx: RecallContext) -> None:
    """The newest value first, answer or candidate: each replaced note shown has the note that
    holds now right before it (moved up, or read and put there)."""
    position = 0
    while position < len(shown):
        hit = shown[position]
        if hit.note.superseded_by_id is None:
            position += 1
            continue
        newest = supersede.current(hit.note)
        placed = next((i for i, h in enumerate(shown) if h.note.pk == newest.pk), None)
        if newest.pk == hit.note.pk or not scopes.fits(newest.scope, ctx.scope):
            position += 1
        elif placed is None:
            shown.insert(position, NoteHit(note=newest, score=0.0, coverage=0.0))
            position += 2
        elif placed > position:
            shown.insert(position, shown.pop(placed))
            position += 2
        else:
            position += 1


@dataclass
class _Notes:
    shown: list[NoteHit]  # what is returned, BM25 order lifted (``_lifted``)
    answering: list[NoteHit]  # those of them that pass the answer bar
    unknown: list[str]  # dimensions the question names that the best answering note lacks
    entry: ReportEntry
    trace: dict[str, Any]


def _outside_scope(ctx: RecallContext) -> bool:
    """Would the words find a note if the scope were not asked? (Says why nothing was found.)"""
    return bool(notes_search(architect=ctx.architect, terms=ctx.keywords, limit=1))


def _lifted(hits: list[NoteHit], question: str) -> list[NoteHit]:
    """BM25's order, each note lifted by the day it was told and by how its conversation around
    it scored (``notes.lift_notes``, on scores scaled to the best)."""
    best = max((h.score for h in hits), default=0.0)
    if best <= 0:
        return hits
    notes = {i: h.note for i, h in enumerate(hits)}
    lifted = lift_notes({i: h.score / best for i, h in enumerate(hits)}, notes, question)
    order = sorted(range(len(hits)), key=lambda i: -lifted[i])  # stable: ties keep BM25's order
    # A note lifted by its neighbours' words never stands above the neighbour that says them.
    order = holders_first(order, {i: h.coverage for i, h in enumerate(hits)}, places_of(notes))
    return [hits[i] for i in order]


def _notes(ctx: RecallContext, found: Look) -> _Notes:
    hits = found.notes  # narrowed to the scope inside the query; ``fits`` has the last word
    fitting = _lifted(
        [
            h
            for h in hits
            if scopes.fits(h.note.scope, ctx.scope) and not ctx.excluded(str(h.note.pk))
        ],
        ctx.text,
    )
    shown = fitting[:MAX_RETURNED]
    ctx.extra["level1_notes"] = [note_item(h) for h in shown]
    ctx.extra["level1_ranked"] = [note_item(h) for h in fitting]  # level 4 fuses with these
    # The one decision (memory.decision): does the list hold the answer, by its words? Its
    # first notes then answer, the one that holds the most of the question first.
    verdict = (
        decision.verdict(
            decision.words_evidence(ctx.weights(), ctx.keywords, [h.matched for h in shown]),
            "words",
        )
        if shown
        else None
    )
    answering = (
        [h for h in shown[: decision.DECIDED] if h.coverage > 0]
        if verdict is not None and verdict["answers"]
        else []
    )
    # A current note beats a replaced one; one bound where the question is beats one whose
    # place or date is unknown.
    answering.sort(
        key=lambda h: (
            h.note.superseded_by_id is not None,
            bool(scopes.unknown(h.note.scope, ctx.scope)),
            -h.coverage,
        )
    )
    if answering:
        _current_first(answering, shown, ctx)
    _current_before_replaced(shown, ctx)
    unknown = scopes.unknown(answering[0].note.scope, ctx.scope) if answering else []
    trace = {
        "level": 1,
        "event": "notes",
        "candidates": len(hits),
        "in_scope": len(fitting),
        "answering": len(answering),
        "best_coverage": round(max((h.coverage for h in fitting), default=0.0), 3),
        "decision": None
        if verdict is None
        else {"notes": [str(h.note.pk) for h in shown[: decision.DECIDED]], **verdict},
    }
    words = ", ".join(ctx.keywords)
    if not answering:
        if not fitting and ctx.scope and (hits or _outside_scope(ctx)):
            note = _OUT_OF_SCOPE(ctx.lang)
        elif fitting:
            note = _WEAK(ctx.lang, words=words)
        else:
            note = _NOTHING(ctx.lang, words=words)
        entry = ReportEntry(1, "tables", "notes", "empty", returned=0, note=note)
        return _Notes(shown, [], [], entry, trace)
    matched = sorted({m for h in answering for m in h.matched})
    entry = ReportEntry(
        1,
        "tables",
        "notes",
        "answered",
        returned=len(shown),
        kind="parameter_dependent" if unknown else relevance.kind_for(answering[0].coverage),
        note=_MATCHED(ctx.lang, words=", ".join(matched)),
    )
    return _Notes(shown, answering, unknown, entry, trace)


def scope_missing(
    answer_scopes: list[list[dict[str, Any]]], ctx: RecallContext, unknown: list[str]
) -> list[dict[str, str]]:
    """What an answer must name about scope, on every level alike: the dimensions its
    statements are bound on that the question does not give, and (``unknown``) those the
    question gives that its best statement is not bound on. Either makes it parameter_dependent."""
    out = []
    for dimension in scopes.missing(answer_scopes, ctx.scope):
        values = sorted(
            {scopes.describe(r) for s in answer_scopes for r in scopes.records(s, dimension)}
        )
        why = _DEPENDS[dimension](ctx.lang, values=", ".join(values))
        out.append({"parameter": "scope", "dimension": dimension, "why": why})
    return out + unknown_missing(unknown, ctx)


def unknown_missing(dimensions: list[str], ctx: RecallContext) -> list[dict[str, str]]:
    """What an answer from a statement unbound where the question is bound must say."""
    out = []
    for dimension in dimensions:
        asked = ", ".join(scopes.describe(r) for r in scopes.records(ctx.scope, dimension))  # type: ignore[arg-type]
        why = _UNKNOWN[dimension](ctx.lang, asked=asked)
        out.append({"parameter": "scope", "dimension": dimension, "why": why})
    return out


# --- objects -----------------------------------------------------------------------------------

_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
_OBJECT = Text(
    ru="Объект «{name}» ({media_type}, {size} байт): {summary}",
    en="Object «{name}» ({media_type}, {size} bytes): {summary}",
)
_OBJECT_PATH = Text(
    ru="Содержимое: {path} (через внутреннюю дверь)",
    en="Content: {path} (through the internal door)",
)
_OBJECT_NAMED = Text(
    ru="вопрос называет объект по id", en="the question names the object by its id"
)


def _object_outcome(
    obj: MemoryObject,
    report: list[ReportEntry],
    trace: list[dict[str, Any]],
    ctx: RecallContext,
    kind: Kind,
) -> Outcome:
    card = objects_service.object_answer(obj)
    lines = [_OBJECT(ctx.lang, **{k: card[k] for k in ("name", "media_type", "size", "summary")})]
    if "content" in card:
        lines.append(card["content"])
    else:
        lines.append(_OBJECT_PATH(ctx.lang, path=card["path"]))
    return Outcome(
        found=True,
        kind=kind,
        form="object",
        text="\n".join(lines),
        object=card,
        data={"objects": [card]},
        report=report,
        trace=trace,
    )


def _named_object(ctx: RecallContext) -> MemoryObject | None:
    ids = _UUID.findall(ctx.text)
    if not ids:
        return None
    return MemoryObject.objects.filter(architect=ctx.architect, pk__in=ids).first()


def _object_item(hit: objects_service.ObjectHit) -> dict[str, Any]:
    return {
        "id": f"objects:{hit.object.pk}",
        "object": str(hit.object.pk),
        "text": hit.object.name,
        "source": "objects",
        "level": 1,
        "matched": hit.matched,
        "coverage": round(hit.coverage, 3),
    }


# --- summaries (the relearning cycle) ----------------------------------------------------------

_LEARNED = Text(
    ru="Из того, что память уже выяснила (саммари прогона {run}, уровень {level}):",
    en="From what the memory has already worked out (summary of run {run}, level {level}):",
)


def _learned(
    ctx: RecallContext,
    report: list[ReportEntry],
    trace: list[dict[str, Any]],
    best_object: objects_service.ObjectHit | None,
    held: dict[Any, set[str]],
) -> Outcome | None:
    hits = summaries.summaries_search(
        architect=ctx.architect,
        terms=ctx.keywords,
        weights=ctx.weights(),
        scope=ctx.scope,
        held=held,
    )
    hits = [h for h in hits if not ctx.excluded(f"summaries:{h.summary.pk}")]
    best = next((h for h in hits if relevance.answers(h.coverage)), None)
    trace.append(
        {
            "level": 1,
            "event": "summaries",
            "candidates": len(hits),
            "best_coverage": round(max((h.coverage for h in hits), default=0.0), 3),
        }
    )
    if best is None or (best_object is not None and best_object.coverage > best.coverage):
        return None
    summary = best.summary
    missing = scope_missing([summary.scope], ctx, unknown=scopes.unknown(summary.scope, ctx.scope))
    kept: Kind = summary.kind if summary.kind in KINDS else "probabilistic"  # type: ignore[assignment]
    kind: Kind = "parameter_dependent" if missing else kept
    report.append(
        ReportEntry(
            1,
            "tables",
            "summaries",
            "answered",
            returned=1,
            kind=kind,
            note=_MATCHED(ctx.lang, words=", ".join(best.matched)),
        )
    )
    found = summaries.card(summary)
    lines = [_LEARNED(ctx.lang, run=summary.run_id, level=summary.level), summary.text]
    data: dict[str, Any] = {
        "summaries": [found],
        "notes": [
            {"id": f"notes:{f['note']}", "note": f["note"], "text": f["text"], "source": "notes"}
            for f in summary.basis
            if f.get("note")
        ],
    }
    answer_object = None
    if summary.object_id is not None and summary.object is not None:
        answer_object = objects_service.object_answer(summary.object)
    return Outcome(
        found=True,
        kind=kind,
        form="text",
        text="\n".join(lines),
        data=data,
        object=answer_object,
        report=report,
        trace=trace,
        missing=missing,
    )


# --- the level ---------------------------------------------------------------------------------


def search(ctx: RecallContext) -> Outcome:
    trace: list[dict[str, Any]] = [{"level": 1, "event": "keywords", "keywords": ctx.keywords}]
    named = _named_object(ctx)
    if named is not None:
        entry = ReportEntry(
            1,
            "tables",
            "objects",
            "answered",
            returned=1,
            kind="affirmative",
            note=_OBJECT_NAMED(ctx.lang),
        )
        return _object_outcome(named, [entry], trace, ctx, "affirmative")
    if not ctx.keywords:
        entry = ReportEntry(1, "tables", "notes", "empty", note=_NO_WORDS(ctx.lang))
        return Outcome(found=False, report=[entry], trace=trace)

    # One statement reads the indexes (``memory.knowledge.lookup``); what follows reads only
    # what matched.
    looked = look(architect=ctx.architect, terms=ctx.keywords, limit=SEARCHED, scope=ctx.scope)
    ctx.extra["weights"] = looked.weights
    tables = _grown(ctx, looked)
    grown, report = tables.data, tables.report
    trace.append({"level": 1, "event": "tables", "matched": sorted(tables.matched)})
    found = _notes(ctx, looked)
    report.append(found.entry)
    trace.append(found.trace)
    items = [note_item(h) for h in found.shown]
    titled = objects_service.objects_search(
        architect=ctx.architect, terms=ctx.keywords, weights=ctx.weights(), held=looked.objects
    )
    titled = [h for h in titled if not ctx.excluded(f"objects:{h.object.pk}")]
    best_object = next((h for h in titled if relevance.answers(h.coverage)), None)
    if titled:
        report.append(
            ReportEntry(
                1,
                "tables",
                "objects",
                "answered" if best_object else "empty",
                returned=1 if best_object else 0,
                kind=relevance.kind_for(best_object.coverage) if best_object else None,
                note=_MATCHED(ctx.lang, words=", ".join(titled[0].matched)),
            )
        )
    best_note = found.answering[0].coverage if found.answering else 0.0
    if grown is None and not found.answering:
        # What an earlier expensive answer taught (the relearning cycle) answers the question
        # it holds, when no note does; its artifact object comes with it.
        learned = _learned(ctx, report, trace, best_object, looked.summaries)
        if learned is not None:
            return learned
    if best_object is not None and grown is None and best_object.coverage >= best_note:
        return _object_outcome(
            best_object.object, report, trace, ctx, relevance.kind_for(best_object.coverage)
        )
    items += [_object_item(h) for h in titled]
    if not found.answering and grown is None:
        return Outcome(found=False, report=report, trace=trace, candidates=items)
    # What the answer must say about scope, from every statement it rests on: notes and table
    # values alike (a value bound elsewhere was never shown).
    missing = scope_missing(
        [h.note.scope for h in found.answering] + tables.scopes,
        ctx,
        unknown=sorted(set(found.unknown) | set(tables.unknown)),
    )
    lines = [m["why"] for m in missing]

    if grown is not None:
        if found.answering:
            grown["notes"] = items
        lines += _tables_text(grown, ctx.lang)
        if found.answering:
            lines += [_FOUND(ctx.lang, count=len(found.shown))]
            lines += [f"{i}. {_line(h, ctx.lang)}" for i, h in enumerate(found.shown, 1)]
        return Outcome(
            found=True,
            kind="parameter_dependent" if missing else tables.kind,
            form="data",
            text="\n".join(lines),
            data=grown,
            report=report,
            trace=trace,
            missing=missing,
            candidates=[] if found.answering else items,
        )

    kind: Kind = (
        "parameter_dependent" if missing else relevance.kind_for(found.answering[0].coverage)
    )
    found.entry.kind = kind
    best = found.answering[0]
    ordered = [best] + [h for h in found.shown if h is not best]
    lines += [_FOUND(ctx.lang, count=len(ordered))]
    lines += [f"{i}. {_line(h, ctx.lang)}" for i, h in enumerate(ordered, 1)]
    return Outcome(
        found=True,
        kind=kind,
        form="text",
        text="\n".join(lines),
        data={"notes": [note_item(h) for h in ordered]},
        report=report,
        trace=trace,
        missing=missing,
    )
