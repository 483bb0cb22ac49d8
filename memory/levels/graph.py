"""Level 3: the knowledge graph, at zero model cost.

Keywords are built by code — named things (natasha, English rules) and content lemmas — and
sent as both ``hl_keywords`` and ``ll_keywords``; the mode is named and only context comes back.
LightRAG ranks by vector similarity with a low cut-off, and e5 gives ≈0.8 to almost any pair, so
it returns context for nearly every question. The memory therefore decides itself: the context
answers only when an entity the graph returned is named in the question (their lemmas meet) and
the relations and sources kept hold the question past the bar of ``memory.relevance``.
A level that always answered would make the levels above it unreachable.
"""

from __future__ import annotations

import re
from typing import Any

from memory import decision, language, ner, relevance
from memory import scope as scopes
from memory.i18n import Text
from memory.ladder import Kind, Outcome, ReportEntry
from memory.levels import store_errors
from memory.levels.context import RecallContext
from memory.models import Architect, Note, Summary
from memory.stores.graph import QUERY_MODE, graph
from memory.stores.graph_types import note_of_chunk, summary_of_chunk

MAX_SOURCES = 5
# The graph's skill: read by the model calls that are offered ask_graph, and by the relearning
# cycle's summary of a level-3 answer (this level itself runs no model).
SKILL = "use-knowledge-graph"

_NO_KEYWORDS = Text(ru="в вопросе нет слов для графа", en="the question has no words for the graph")
_UNRELATED = Text(
    ru="граф вернул {count} сущностей, ни одна не названа в вопросе",
    en="the graph returned {count} entities, none of them named in the question",
)
_WEAK = Text(
    ru="сущности {names} названы, но связи покрывают вопрос слабо ({coverage:.2f})",
    en="entities {names} are named, but their relations cover the question weakly ({coverage:.2f})",
)
_MATCHED = Text(ru="совпали сущности: {names}", en="matched entities: {names}")
_FOUND = Text(ru="Найдено в графе знаний:", en="Found in the knowledge graph:")
_SOURCES = Text(ru="Источники:", en="Sources:")
_OLD = Text(ru="заменено более новым (история)", en="replaced by a newer one (history)")
_UNTIL = Text(ru="история: верно до {date}", en="history: held until {date}")


def _until(ctx: RecallContext, relation: dict[str, Any]) -> str:
    if relation.get("current", True) or not relation.get("valid_to"):
        return ""
    return f" — {_UNTIL(ctx.lang, date=relation['valid_to'][:10])}"


def keywords(ctx: RecallContext) -> tuple[list[str], list[str]]:
    """(hl, ll): built by code so the graph never needs a model to extract them."""
    named = [n.name for n in ner.entities(ctx.text)]
    low = list(dict.fromkeys([*named, *ctx.keywords]))
    high = list(dict.fromkeys(ctx.keywords or named))
    return (high or low), (low or high)


def _lemmas(text: str) -> set[str]:
    return set(language.keywords(text))


def _current_in_scope(
    ctx: RecallContext, chunks: list[dict[str, Any]], history: bool = False
) -> tuple[list[dict[str, Any]], list[str]]:
    """The chunks whose note holds where and when asked and was not replaced by a newer one
    (the graph answers with current facts; with ``history`` the replaced ones too, marked),
    and the dimensions left unknown by the best."""
    sources = [note_of_chunk(c.get("source")) for c in chunks]
    ids = [s for s in sources if s]
    notes = {str(n.pk): n for n in Note.objects.filter(architect=ctx.architect, pk__in=ids)}
    learned = [summary_of_chunk(c.get("source")) for c in chunks]
    summaries = {
        str(s.pk): s
        for s in Summary.objects.filter(architect=ctx.architect, pk__in=[x for x in learned if x])
    }
    kept: list[dict[str, Any]] = []
    for chunk, source, summary_id in zip(chunks, sources, learned, strict=True):
        note = notes.get(source) if source else None
        if summary_id is not None:
            # A relearned summary holds where its facts did; one the architect denied never
            # answers again (PASSPORT.md §16), nor does one that is gone.
            summary = summaries.get(summary_id)
            if summary is not None and summary.denied_by_id is None:
                if scopes.fits(summary.scope, ctx.scope):
                    kept.append({**chunk, "scope": summary.scope, "current": True})
            continue
        if note is None:
            if not ctx.scope:  # a source that is not a note has no scope: unknown where
                kept.append(chunk)
            continue
        current = note.superseded_by_id is None
        if (current or history) and scopes.fits(note.scope, ctx.scope):
            # (a note's scope as kept; scope_missing names what the question leaves open)
            kept.append({**chunk, "scope": note.scope, "current": current})
    kept.sort(
        key=lambda c: (
            c.get("current") is False,
            bool(scopes.unknown(c.get("scope") or [], ctx.scope)),
        )
    )
    unknown = scopes.unknown(kept[0].get("scope") or [], ctx.scope) if kept else []
    return kept, unknown


def _valid_relations(
    ctx: RecallContext, relations: list[dict[str, Any]], history: bool
) -> list[dict[str, Any]]:
    """Each relation with its validity interval, read from the notes it was told in: valid from
    the first of them, until the last was replaced by a newer note (open while any is current).
    A relation no longer valid is history: kept only when the question asks for history."""
    told = {r_id: [n for n in map(note_of_chunk, r.get("sources", [])) if n] for r_id, r in
            enumerate(relations)}  # fmt: skip
    ids = {n for found in told.values() for n in found}
    notes = {str(n.pk): n for n in Note.objects.filter(architect=ctx.architect, pk__in=ids)}
    out: list[dict[str, Any]] = []
    for r_id, relation in enumerate(relations):
        own = [notes[n] for n in told[r_id] if n in notes]
        ended = bool(own) and all(n.superseded_by_id is not None for n in own)
        valid_to = max(n.superseded_at for n in own if n.superseded_at) if ended else None
        if ended and not history:
            continue
        out.append(
            {
                **relation,
                "valid_from": min(n.created_at for n in own).isoformat() if own else None,
                "valid_to": valid_to.isoformat() if valid_to else None,
                "current": not ended,
            }
        )
    out.sort(key=lambda r: not r["current"])
    return out


_JOINS = re.compile(r"\s+(?:и|а также|and|as well as)\s+|[;,]", re.IGNORECASE)


def _coverage(ctx: RecallContext, chunks: list[dict[str, Any]], linked: set[str]) -> float:
    """How well the graph's sources hold the question, by the one bar of ``memory.relevance``.

    Each part of the question (parts are joined by «и», "and", a comma) must be held by ONE
    source together with the relations: the graph may join notes about two things asked
    together («Где работает Антон и на чём играет Вера?»), but never splits one part across
    unrelated notes — «телефон прораба в Дубае» is not answered by a foreman's phone in Kazan
    plus a note that names Dubai."""
    weights = ctx.weights()
    parts = [p for p in (language.keywords(piece) for piece in _JOINS.split(ctx.text)) if p]
    parts = parts or [list(ctx.keywords)]
    held = [_lemmas(c["content"]) for c in chunks] or [set()]
    mass = [sum(weights.idf(t) for t in set(p) - relevance.FRAME) for p in parts]
    if sum(mass) <= 0:
        return 0.0
    best = [max(weights.coverage(p, h | linked) for h in held) for p in parts]
    return sum(b * m for b, m in zip(best, mass, strict=True)) / sum(mass)


def _chunk_items(ctx: RecallContext, chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The graph's source chunks that are notes, as candidates (the notes themselves)."""
    ids = [s for s in (note_of_chunk(c.get("source")) for c in chunks) if s]
    notes = {str(n.pk): n for n in Note.objects.filter(architect=ctx.architect, pk__in=ids)}
    return [
        {
            "id": pk,
            "note": pk,
            "text": notes[pk].text,
            "scope": notes[pk].scope,
            "created_at": notes[pk].created_at.isoformat(),
            "level": 3,
            "source": "graph",
        }
        for pk in ids
        if pk in notes and scopes.fits(notes[pk].scope, ctx.scope)
    ]


def search(ctx: RecallContext) -> Outcome:
    high, low = keywords(ctx)
    trace: list[dict[str, Any]] = [
        {
            "level": 3,
            "event": "keywords",
            "mode": QUERY_MODE,
            "hl_keywords": high,
            "ll_keywords": low,
        }
    ]
    if not high or not low:
        entry = ReportEntry(3, "graph", "lightrag", "empty", note=_NO_KEYWORDS(ctx.lang))
        return Outcome(found=False, report=[entry], trace=trace)
    try:
        context = graph().query(
            architect_id=ctx.architect.pk, question=ctx.text, hl_keywords=high, ll_keywords=low
        )
    except Exception as error:  # a store error is this level's report entry, never a 500
        entry = ReportEntry(3, "graph", "lightrag", "failed", note=store_errors.reason(error))
        trace.append({"level": 3, "event": "failed", "error": getattr(error, "code", "")})
        return Outcome(found=False, report=[entry], trace=trace)

    # What the caller already has (previous_results) is not returned again.
    context.chunks = [
        c for c in context.chunks if not ctx.excluded(note_of_chunk(c["source"]) or "")
    ]
    asked = set(ctx.keywords) | {lemma for name in low for lemma in _lemmas(name)}
    matched = [e for e in context.entities if _lemmas(e["name"]) & asked]
    trace.append(
        {"level": 3, "event": "context", "entities": len(context.entities), "matched": len(matched)}
    )
    if not matched:
        entry = ReportEntry(
            3,
            "graph",
            "lightrag",
            "empty",
            returned=0,
            note=_UNRELATED(ctx.lang, count=len(context.entities)),
        )
        return Outcome(found=False, report=[entry], trace=trace)

    names = {e["name"] for e in matched}
    history = relevance.asks_history(ctx.text)
    relations = _valid_relations(
        ctx,
        [r for r in context.relations if r["source"] in names or r["target"] in names],
        history,
    )
    matched_lemmas = {lemma for e in matched for lemma in _lemmas(e["name"])}
    chunks, unknown = _current_in_scope(
        ctx, [c for c in context.chunks if _lemmas(c["content"]) & matched_lemmas], history
    )
    chunks = chunks[:MAX_SOURCES]
    linked = {  # what the graph's relations say; the notes each say their own part
        lemma
        for r in relations
        for lemma in _lemmas(f"{r['source']} {r['target']} {r['description']} {r['keywords']}")
    }
    if ctx.scope:  # a scoped question is answered from the sources that hold there only
        relations, linked = [], set()
    coverage = _coverage(ctx, chunks, linked)
    # The one decision (memory.decision), on the words the sources and relations hold.
    _, _, unseen = ctx.weights().shares(ctx.keywords, set())
    verdict = decision.verdict(
        decision.Evidence(
            coverage=coverage,
            missed=max(0.0, 1.0 - coverage - unseen),
            unseen=unseen,
            best_coverage=coverage,
        ),
        "words",
        language.unheld(ctx.text, [str(c.get("content") or "") for c in chunks]),
    )
    trace.append(
        {"level": 3, "event": "coverage", "coverage": round(coverage, 3), "decision": verdict}
    )
    if not verdict["answers"]:
        entry = ReportEntry(
            3,
            "graph",
            "lightrag",
            "empty",
            note=_WEAK(ctx.lang, names=", ".join(sorted(names)), coverage=coverage),
        )
        return Outcome(
            found=False, report=[entry], trace=trace, candidates=_chunk_items(ctx, chunks)
        )
    missing = scopes.scope_missing(
        [c.get("scope") or [] for c in chunks], ctx.scope, lang=ctx.lang, unknown=unknown
    )
    kind: Kind = "parameter_dependent" if missing else relevance.kind_for(coverage)
    lines = [m["why"] for m in missing] + [_FOUND(ctx.lang)]
    lines += [
        f"- {r['source']} → {r['target']}: {r['description']}{_until(ctx, r)}" for r in relations
    ]
    if chunks:
        lines.append(_SOURCES(ctx.lang))
        lines += [
            f"- «{c['content'][:300]}»{'' if c.get('current', True) else ' — ' + _OLD(ctx.lang)}"
            for c in chunks
        ]
    entry = ReportEntry(
        3,
        "graph",
        "lightrag",
        "answered",
        returned=len(matched),
        kind=kind,
        note=_MATCHED(ctx.lang, names=", ".join(sorted(names))),
    )
    return Outcome(
        found=True,
        kind=kind,
        form="text",
        text="\n".join(lines),
        data={"entities": matched, "relations": relations, "chunks": chunks},
        report=[entry],
        trace=trace,
        missing=missing,
    )


def ask(architect: Architect, question: str, scope: list[dict[str, Any]]) -> dict[str, Any]:
    """Level 3 for the agent's ``ask_graph`` tool: the question, by the request's scope, in the
    tool's words (found, kind and the graph's context, or why not)."""
    ctx = RecallContext.of(
        architect=architect,
        text=question,
        scope=scope,
        lang="ru",
    )
    outcome = search(ctx)
    if not outcome.found:
        return {"found": False, "note": outcome.report[0].note if outcome.report else ""}
    return {"found": True, "kind": outcome.kind, "context": outcome.data}
