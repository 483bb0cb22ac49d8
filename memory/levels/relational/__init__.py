"""Level 1: the relational store, no model. Keywords built by code meet the stored lemmas.

Four sources, all read with parameterised SELECTs, one module each: the grown shape (``grown``),
the verbatim notes (``notes``), objects (``objects``) and summaries (``summaries``):
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

from typing import Any

from memory import relevance
from memory import scope as scopes
from memory.i18n import Text
from memory.knowledge import objects as objects_service
from memory.knowledge.lookup import look
from memory.ladder import Kind, Outcome, ReportEntry
from memory.levels.context import RecallContext
from memory.levels.relational.grown import _grown, _tables_text
from memory.levels.relational.notes import _line, _notes, note_item
from memory.levels.relational.objects import (
    _OBJECT_NAMED,
    _named_object,
    _object_item,
    _object_outcome,
)
from memory.levels.relational.summaries import _learned
from memory.levels.relational.words import MATCHED

SEARCHED = 40  # ranked notes read (already narrowed to the scope by the query)
_NO_WORDS = Text(
    ru="в вопросе нет слов, по которым можно искать",
    en="the question has no content words to search by",
)
_FOUND = Text(ru="Найдено в заметках ({count}):", en="Found in notes ({count}):")


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
    ctx.weighed = looked.weights
    tables = _grown(ctx, looked)
    grown, report = tables.data, tables.report
    trace.append({"level": 1, "event": "tables", "matched": sorted(tables.matched)})
    found = _notes(ctx, looked)
    report.append(found.entry)
    trace.append(found.trace)
    items = [note_item(h) for h in found.shown]
    titled = objects_service.objects_search(
        architect=ctx.architect,
        terms=ctx.keywords,
        weights=ctx.weights(),
        held=looked.objects,
        scope=ctx.scope,
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
                note=MATCHED(ctx.lang, words=", ".join(titled[0].matched)),
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
    missing = scopes.scope_missing(
        [h.note.scope for h in found.answering] + tables.scopes,
        ctx.scope,
        lang=ctx.lang,
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
