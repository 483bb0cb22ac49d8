"""Level 1's verbatim notes: ranked by BM25 over the full-text index (``memory.knowledge.notes``);
whether their list holds the answer is the answer decision's (``memory.decision``, model
``words``). The current value before the one it replaced; a neighbour never above the note that
holds the words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory import decision, language, relevance
from memory import scope as scopes
from memory.i18n import Text
from memory.knowledge import supersede
from memory.knowledge.lookup import Look, NoteHit, notes_search
from memory.knowledge.notes import holders_first, lift_notes, places_of
from memory.ladder import ReportEntry
from memory.levels.context import RecallContext
from memory.levels.relational.words import MATCHED

MAX_RETURNED = 10
_NOTHING = Text(
    ru="ни одна заметка не совпала по словам: {words}", en="no note shares the words: {words}"
)
_WEAK = Text(
    ru="совпадения ниже порога ответа — это кандидаты, не ответ: {words}",
    en="the matches are below the answer bar — candidates, not an answer: {words}",
)
_OUT_OF_SCOPE = Text(
    ru="заметки есть, но их охват не совпал с охватом вопроса",
    en="notes exist, but their scope does not fit the question's scope",
)
_HISTORY = Text(ru="заменено более новым (история)", en="replaced by a newer one (history)")


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
    ctx.level1_notes = [note_item(h) for h in shown]
    ctx.level1_ranked = [note_item(h) for h in fitting]  # level 4 fuses with these
    # The one decision (memory.decision): does the list hold the answer, by its words? Its
    # first notes then answer, the one that holds the most of the question first.
    verdict = (
        decision.verdict(
            decision.words_evidence(ctx.weights(), ctx.keywords, [h.matched for h in shown]),
            "words",
            language.unheld(ctx.text, [shown[0].note.text]),
        )
        if shown
        else None
    )
    answering = (
        [
            h
            for h in shown[: decision.DECIDED]
            if h.coverage > 0 and not language.unheld(ctx.text, [h.note.text])
        ]
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
        note=MATCHED(ctx.lang, words=", ".join(matched)),
    )
    return _Notes(shown, answering, unknown, entry, trace)
