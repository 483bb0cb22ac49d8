"""Level 1: the relational store, no model. Keywords built by code meet the stored lemmas.

A note answers when it holds at least half of the question's content lemmas: all of them →
``affirmative``; some → ``probabilistic``. A note bound to a place or a date the question does
not give makes the answer ``parameter_dependent``, naming what is missing and why.
"""

from __future__ import annotations

from typing import Any

from memory import scope as scopes
from memory.i18n import Text
from memory.ladder import Kind, Outcome, ReportEntry
from memory.levels.context import RecallContext
from memory.services.notes import NoteHit, notes_search

MIN_COVERAGE = 0.5
MAX_RETURNED = 10

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
_OUT_OF_SCOPE = Text(
    ru="заметки есть, но их охват не совпал с охватом вопроса",
    en="notes exist, but their scope does not fit the question's scope",
)
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


def search(ctx: RecallContext) -> Outcome:
    lang = ctx.lang
    trace: list[dict[str, Any]] = [{"level": 1, "event": "keywords", "keywords": ctx.keywords}]
    if not ctx.keywords:
        entry = ReportEntry(1, "tables", "notes", "empty", note=_NO_WORDS(lang))
        return Outcome(found=False, report=[entry], trace=trace)

    hits = notes_search(architect=ctx.architect, keywords=ctx.keywords)
    strong = [h for h in hits if h.coverage >= MIN_COVERAGE]
    fitting = [h for h in strong if scopes.fits(h.note.scope, ctx.scope)]
    trace.append(
        {
            "level": 1,
            "event": "notes",
            "candidates": len(hits),
            "strong": len(strong),
            "in_scope": len(fitting),
        }
    )
    words = ", ".join(ctx.keywords)
    if not fitting:
        if strong:
            note = _OUT_OF_SCOPE(lang)
        elif hits:
            note = _WEAK(lang, words=words)
        else:
            note = _NOTHING(lang, words=words)
        entry = ReportEntry(1, "tables", "notes", "empty", returned=0, note=note)
        return Outcome(found=False, report=[entry], trace=trace)

    shown = fitting[:MAX_RETURNED]
    missing = scopes.missing((h.note.scope for h in shown), ctx.scope)
    kind: Kind
    if missing:
        kind = "parameter_dependent"
    elif shown[0].coverage >= 1.0:
        kind = "affirmative"
    else:
        kind = "probabilistic"

    lines = [_FOUND(lang, count=len(shown))] + [f"{i}. {_line(h)}" for i, h in enumerate(shown, 1)]
    missing_out = []
    for dimension in missing:
        values = sorted(
            {scopes.describe(r) for h in shown for r in scopes.records(h.note.scope, dimension)}
        )
        why = _DEPENDS[dimension](lang, values=", ".join(values))
        missing_out.append({"parameter": "scope", "dimension": dimension, "why": why})
        lines.insert(0, why)
    matched = sorted({m for h in shown for m in h.matched})
    entry = ReportEntry(
        1,
        "tables",
        "notes",
        "answered",
        returned=len(shown),
        kind=kind,
        note=_MATCHED(lang, words=", ".join(matched)),
    )
    return Outcome(
        found=True,
        kind=kind,
        form="text",
        text="\n".join(lines),
        data={"notes": [_note_data(h) for h in shown]},
        report=[entry],
        trace=trace,
        missing=missing_out,
    )
