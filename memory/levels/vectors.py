"""Level 4, deep: hybrid search — by meaning in the vectors AND by terms in the full-text index.

Notes, notes in their context, summaries and object cards are searched by meaning; level 1's
BM25 list over the notes comes along. The lists are merged by score fusion (``fuse``)
into one ranked list (up to 10) where each item says its source, its similarity and its BM25
score. The scope is applied inside each store's query (``memory.scope``).

A note found in its context (``context`` vectors: the note read after the one told before it)
adds to that note's rank and never answers by itself: the words that matched may be the
neighbour's.

Whether the list holds the answer is the answer decision's (``memory.decision``, model
``meaning``: the first note's words and its place among the nearest notes); a summary or an
object card answers at or above its floor, measured on our embedder (e5 similarities sit close
together: bench/notes_threshold.py, bench/objects_threshold.py, PASSPORT.md «Поиск»). A kept
conclusion is one thing whichever copy is hit: its artifact object answers at the summaries'
floor, and a denied conclusion's summary and artifact are left out (``_kept``). Otherwise
the list is returned as candidates. An object as the best answering item makes the answer an
object. A neighbour lifted by a note never stands above it (``notes.holders_first``), and a newer
note that says a value changed goes before the older one for this question
(``supersede.newest_first``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from datetime import datetime
from types import SimpleNamespace
from typing import Any

from django.conf import settings
from django.db.models import Q

from memory import decision, language
from memory import scope as scopes
from memory.i18n import Text
from memory.knowledge import objects as objects_service
from memory.knowledge import supersede
from memory.knowledge.notes import holders_first, lift_notes, places_of
from memory.ladder import Kind, Outcome, ReportEntry
from memory.levels import store_errors
from memory.levels.context import RecallContext
from memory.models import MemoryObject, Note, Summary
from memory.stores.embeddings import embedder
from memory.stores.vectors import KINDS, vectors

# The vectors' skill (how an answer found by meaning reads): this level runs no model, so the
# call that reads it is the relearning cycle's summary of a level-4 answer.
SKILL = "use-vectors"

SEARCHED = 20  # nearest points read per kind before fusion
RETURNED = 10

_FOUND = Text(ru="Найдено по смыслу и по словам:", en="Found by meaning and by words:")
_BELOW = Text(
    ru="лучшее сходство {best:.3f} ниже порога {floor:.3f}",
    en="the best similarity {best:.3f} is below the floor {floor:.3f}",
)
_NONE = Text(ru="коллекция пуста", en="the collection is empty")
_ABOVE = Text(
    ru="{count} выше порога {floor:.3f}, лучшее {best:.3f}",
    en="{count} above the floor {floor:.3f}, best {best:.3f}",
)
_TERMS = Text(
    ru="по словам: {count} заметок в общем списке", en="by words: {count} notes in the merged list"
)


_CONTEXT = Text(
    ru="в контексте беседы: {count} заметок, лучшее сходство {best:.3f} (порядок, не ответ)",
    en="in conversation context: {count} notes, best similarity {best:.3f} (rank, not answer)",
)


_NEAREST = Text(
    ru="{count} ближайших заметок, лучшее сходство {best:.3f} (порядок; держит ли список ответ, решает решение)",
    en="{count} nearest notes, best similarity {best:.3f} (rank; whether the list holds the answer is the decision's)",
)
_DECIDED = Text(
    ru="держит ли список ответ: вероятность {p:.2f} {sign} порога {threshold:.2f} (по словам и по смыслу первой заметки)",
    en="does the list hold the answer: probability {p:.2f} {sign} the threshold {threshold:.2f} (the first note's words and meaning)",
)


def floor(kind: str) -> float:
    """The similarity from which a summary or an object answers. Notes rank, and whether their
    list holds the answer is the decision's (``_decide``); a note in its context only ranks."""
    if kind in ("notes", "context"):
        return math.inf
    return settings.OBJECTS_MIN_SCORE if kind == "objects" else settings.VECTOR_MIN_SCORE


@dataclasses.dataclass(frozen=True)
class Kept:
    """The conclusions kept from earlier runs among the hits (``_kept``): a summary and its
    artifact object are one conclusion, so both answer by the summaries' rule."""

    denied: frozenset[str] = frozenset()  # summaries the architect denied: they stay, unread
    artifacts: frozenset[str] = frozenset()  # objects that are a kept conclusion's document
    denied_artifacts: frozenset[str] = frozenset()  # those whose every summary was denied

    def floor(self, kind: str, hit: Any) -> float:
        """An artifact's card answers at the summaries' floor, not at the objects' one: its
        card holds the question it answered, and the objects' floor, measured on documents'
        cards, let a never-told neighbour of that question be «found» (bench/relearning.py)."""
        if kind == "objects" and _object_of(hit) in self.artifacts:
            return floor("summaries")
        return floor(kind)

    def left_out(self, item: dict[str, Any]) -> bool:
        return (
            str(item.get("summary") or "") in self.denied
            or str(item.get("object") or "") in self.denied_artifacts
        )


def _object_of(hit: Any) -> str:
    """The object an ``objects`` hit is the card of."""
    return str(hit.payload.get("object") or hit.id)


def _item(kind: str, hit: Any, answers_from: float | None = None) -> dict[str, Any]:
    """One hit as the fused list holds it; it answers from ``answers_from`` (its kind's floor
    unless a kept conclusion's rule says otherwise, ``Kept.floor``)."""
    if answers_from is None:
        answers_from = floor(kind)
    if kind == "context":  # it ranks its note; its text is the window, not the note
        return {
            "id": f"notes:{hit.payload.get('note', hit.id)}",
            "note": hit.payload.get("note", hit.id),
            "context_similarity": round(hit.score, 4),
            "answers": hit.score >= answers_from,
        }
    payload = {k: v for k, v in hit.payload.items() if k not in ("architect", "places")}
    item = {"id": f"{kind}:{hit.id}", "source": kind, "similarity": round(hit.score, 4)}
    item.update(payload)
    item["answers"] = hit.score >= answers_from
    return item


def _lexical(ctx: RecallContext) -> list[dict[str, Any]]:
    return [
        {
            **note,
            "id": f"notes:{note['note']}",
            "bm25": note["score"],
            "answers": False,  # decided after fusion, on all the evidence (``_decide``)
        }
        for note in ctx.level1_ranked
    ]


def _weight(kind: str) -> float:
    return settings.HYBRID_CONTEXT_WEIGHT if kind == "context" else settings.HYBRID_MEANING_WEIGHT


def _similarity(item: dict[str, Any]) -> float:
    return item["context_similarity"] if "context_similarity" in item else item["similarity"]


def fuse(
    lexical: list[dict[str, Any]], meaning: list[tuple[str, list[dict[str, Any]]]]
) -> list[dict[str, Any]]:
    """Score fusion, measured better than rank fusion here (bench/retrieval.py; PASSPORT.md
    «Поиск»): BM25 divided by the best BM25, plus each kind's weight (HYBRID_MEANING_WEIGHT,
    HYBRID_CONTEXT_WEIGHT for the context vectors) times the similarity scaled to 0…1 within
    its own list (best 1, the last read 0). One entry per item."""
    fused: dict[str, float] = {}
    merged: dict[str, dict[str, Any]] = {}

    def take(item: dict[str, Any], score: float) -> None:
        key = item["id"]
        fused[key] = fused.get(key, 0.0) + score
        seen = merged.setdefault(key, {})
        answers = seen.get("answers", False) or item.get("answers", False)
        seen.update({k: v for k, v in item.items() if k not in seen or v is not None})
        seen["answers"] = answers

    best = max((i["bm25"] for i in lexical), default=0.0)
    for item in lexical:
        take(item, settings.HYBRID_TERMS_WEIGHT * (item["bm25"] / best if best > 0 else 0.0))
    for kind, ranked in meaning:
        if not ranked:
            continue
        top, last = _similarity(ranked[0]), _similarity(ranked[-1])
        span = top - last
        for item in ranked:
            scaled = (_similarity(item) - last) / span if span > 0 else 1.0
            take(item, _weight(kind) * scaled)
    order = sorted(fused, key=lambda k: -fused[k])
    return [{**merged[k], "fused": round(fused[k], 5)} for k in order]


def search(ctx: RecallContext) -> Outcome:
    report: list[ReportEntry] = []
    trace: list[dict[str, Any]] = []
    meaning: list[list[dict[str, Any]]] = []
    lexical = _lexical(ctx)
    searched: list[tuple[str, list[Any]]] = []
    for kind in KINDS:
        try:
            hits = vectors().search(
                kind=kind,
                architect_id=ctx.architect.pk,
                query=ctx.text,
                limit=SEARCHED,
                scope=ctx.scope,
                with_vectors=kind == "notes",  # for the decision's ``pull``, in the same query
            )
        except Exception as error:  # a store error is this level's report entry, never a 500
            report.append(
                ReportEntry(4, "vectors", kind, "failed", note=store_errors.reason(error))
            )
            trace.append(
                {"level": 4, "event": "failed", "kind": kind, "error": getattr(error, "code", "")}
            )
            continue
        searched.append((kind, hits))
    kept = _kept(ctx, searched)
    for kind, hits in searched:
        floors = [kept.floor(kind, h) for h in hits]
        items = [_item(kind, h, f) for h, f in zip(hits, floors, strict=True)]
        good = [i for i in items if i["answers"] and not kept.left_out(i)]
        trace.append(
            {
                "level": 4,
                "event": "search",
                "kind": kind,
                "scores": [round(h.score, 4) for h in hits],
            }
        )
        if not hits:
            note = _NONE(ctx.lang)
        elif kind == "context":
            note = _CONTEXT(ctx.lang, count=len(hits), best=hits[0].score)
        elif kind == "notes":
            note = _NEAREST(ctx.lang, count=len(hits), best=hits[0].score)
        elif not good:
            note = _BELOW(ctx.lang, best=hits[0].score, floor=floors[0])
        else:
            best = items.index(good[0])
            note = _ABOVE(ctx.lang, count=len(good), floor=floors[best], best=hits[best].score)
        report.append(
            ReportEntry(
                4,
                "vectors",
                kind,
                "answered" if good else "empty",
                returned=len(good),
                kind="probabilistic" if good else None,
                note=note,
            )
        )
        meaning.append((kind, items))
    ranked = [
        i
        for i in _lifted(fuse(lexical, meaning), ctx)
        if not ctx.excluded(i) and not kept.left_out(i)
    ][:RETURNED]
    _fill_notes(ranked, ctx)
    trace.append({"level": 4, "event": "fused", "items": len(ranked), "terms": len(lexical)})
    if lexical:
        report.append(
            ReportEntry(4, "vectors", "terms", "empty", note=_TERMS(ctx.lang, count=len(lexical)))
        )
    # Decided before the notes that hold now take the place of those they replaced: a replaced
    # note's answer passes to the note that holds now (``_mark_current``).
    verdict = _decide(ranked, meaning, dict(searched).get("notes", []), ctx)
    trace.append({"level": 4, "event": "decision", "verdict": verdict})
    if verdict is not None:
        report.append(
            ReportEntry(
                4,
                "vectors",
                "decision",
                "answered" if verdict["answers"] else "empty",
                returned=1 if verdict["answers"] else 0,
                kind="probabilistic" if verdict["answers"] else None,
                note=_DECIDED(
                    ctx.lang,
                    p=verdict["p"],
                    sign="≥" if verdict["answers"] else "<",
                    threshold=verdict["threshold"],
                ),
            )
        )
    _mark_current(ranked, ctx)
    _newest_first(ranked, ctx)
    answering = sorted(
        (i for i in ranked if i["answers"]), key=lambda i: not i.get("current", True)
    )
    if answering and answering[0] is not ranked[0]:  # the answer goes first, the rest as ranked
        ranked.remove(answering[0])
        ranked.insert(0, answering[0])
    if not answering:
        return Outcome(found=False, report=report, trace=trace, candidates=_as_notes(ranked))

    best = answering[0]
    unknown = scopes.unknown(best.get("scope") or [], ctx.scope)
    missing = scopes.scope_missing(
        [best.get("scope") or []], ctx.scope, lang=ctx.lang, unknown=unknown
    )
    kind: Kind = "parameter_dependent" if missing else "probabilistic"
    lines = [_FOUND(ctx.lang)]
    for item in ranked:
        similarity = f" {item['similarity']:.3f}" if "similarity" in item else ""
        lines.append(f"- [{item['source']}{similarity}] {str(item.get('text', ''))[:400]}")
    # The form follows the closest match by meaning: an object there makes the answer that object.
    closest = max(answering, key=lambda i: i.get("similarity", 0.0))
    answer_object = None
    if closest["source"] == "objects":
        found = MemoryObject.objects.filter(
            pk=closest.get("object"), architect=ctx.architect
        ).first()
        if found is not None:
            answer_object = objects_service.object_answer(found)
    return Outcome(
        found=True,
        kind=kind,
        form="object" if answer_object else "text",
        text="\n".join([m["why"] for m in missing] + lines),
        data={"hits": ranked},
        object=answer_object,
        report=report,
        trace=trace,
        missing=missing,
    )


def _decide(
    ranked: list[dict[str, Any]],
    meaning: list[tuple[str, list[dict[str, Any]]]],
    nearest: list[Any],
    ctx: RecallContext,
) -> dict[str, Any] | None:
    """Does the ranked list hold the answer? The one decision (``memory.decision``, model
    ``meaning``) on its first note: its words and its place among the nearest notes
    (``nearest``: the notes' hits, with their vectors). The first note then answers; summaries
    and objects keep their similarity floors. Returns the verdict for the trace (None when no
    note was ranked)."""
    notes = [i for i in ranked if i.get("note") and i.get("source") in ("notes", None)]
    for item in notes:
        item["answers"] = False
    if not notes:
        return None
    lists = dict(meaning)
    own = lists.get("notes", [])
    similarities = [i["similarity"] for i in own]
    by_note = {str(i.get("note")): i["similarity"] for i in own if i.get("note")}
    context = {str(i.get("note")): i["context_similarity"] for i in lists.get("context", [])}
    first = notes[0]
    key = str(first["note"])
    words = decision.words_evidence(
        ctx.weights(), ctx.keywords, [i.get("matched") or [] for i in notes]
    )
    dense = decision.dense_evidence(similarities, by_note.get(key), context.get(key))
    dense["pull"] = _pull(ctx.text, str(first.get("text") or ""), key, nearest)
    evidence = dataclasses.replace(words, **dense)
    verdict = decision.verdict(
        evidence,
        "meaning",
        language.unheld(ctx.text, [str(first.get("text") or "")]),
    )
    first["answers"] = verdict["answers"]
    return {"note": key, "notes": [str(i["note"]) for i in notes[: decision.DECIDED]], **verdict}


def pull_of(
    question: str,
    text: str,
    position: int | None,
    whole: Sequence[float],
    points: Sequence[Sequence[float]],
    embed_query: Callable[[str], Sequence[float]],
) -> float:
    """The decision's ``pull`` for the note at ``position`` among the nearest notes (``whole``:
    their similarities to the question, ``points``: their unit vectors; ``text``: the note's):
    the question without the words the note does not hold (``language.without_unheld_words``),
    embedded once by ``embed_query`` and compared with the same vectors (``decision.pull``).
    The one computation for this level and for ``bench/decision.py``'s rebuilt LoCoMo."""
    without = language.without_unheld_words(question, text)
    if without is None or position is None:
        return 0.0
    asked = list(embed_query(without))
    length = math.sqrt(sum(v * v for v in asked)) or 1.0
    closeness = [sum(a * b for a, b in zip(asked, v, strict=True)) / length for v in points]
    return decision.pull(whole, closeness, position)


def _pull(question: str, text: str, key: str, nearest: list[Any]) -> float:
    """``pull_of`` over the notes' hits, whose vectors came with the search: no store query."""
    if any(h.vector is None for h in nearest):
        return 0.0
    position = next(
        (i for i, h in enumerate(nearest) if str(h.payload.get("note", h.id)) == key), None
    )
    return pull_of(
        question,
        text,
        position,
        [h.score for h in nearest],
        [h.vector for h in nearest],
        lambda phrase: embedder().embed_query([phrase])[0],
    )


def _kept(ctx: RecallContext, searched: list[tuple[str, list[Any]]]) -> Kept:
    """The conclusions kept from earlier runs among the hits, read in one query: the summaries
    the architect denied, and the objects that are a summary's artifact (denied when every
    summary holding it was). None read when neither a summary nor an object was hit."""
    summaries = {
        str(h.payload.get("summary") or h.id)
        for kind, hits in searched
        if kind == "summaries"
        for h in hits
    }
    objects = {_object_of(h) for kind, hits in searched if kind == "objects" for h in hits}
    if not summaries and not objects:
        return Kept()
    rows = Summary.objects.filter(architect=ctx.architect).filter(
        Q(pk__in=summaries) | Q(object_id__in=objects)
    )
    denied: set[str] = set()
    artifacts: dict[str, bool] = {}  # object → does one of its summaries still answer
    for pk, object_id, denied_by in rows.values_list("pk", "object_id", "denied_by_id"):
        if str(pk) in summaries and denied_by is not None:
            denied.add(str(pk))
        if object_id is not None and str(object_id) in objects:
            artifacts[str(object_id)] = artifacts.get(str(object_id), False) or denied_by is None
    return Kept(
        denied=frozenset(denied),
        artifacts=frozenset(artifacts),
        denied_artifacts=frozenset(o for o, answers in artifacts.items() if not answers),
    )


def _lifted(fused: list[dict[str, Any]], ctx: RecallContext) -> list[dict[str, Any]]:
    """The fused order, each note lifted by the day it was told and by how its conversation
    around it scored (``notes.lift_notes``; one query for the notes). Scores stay on fusion's
    scale."""
    ids = [i["note"] for i in fused if i.get("note")]
    if not ids:
        return fused
    notes = {
        str(note.pk): note
        for note in Note.objects.filter(architect=ctx.architect, pk__in=ids).only(
            "pk", "talk", "position", "created_at"
        )
    }
    by_id = {i["id"]: notes[str(i["note"])] for i in fused if str(i.get("note")) in notes}
    lifted = lift_notes({i["id"]: i["fused"] for i in fused}, by_id, ctx.text)
    ordered = sorted(fused, key=lambda i: -lifted[i["id"]])
    # A note lifted by its neighbours (their words, its context vector) never stands above the
    # neighbour that holds the words itself: its own words and its own meaning.
    items = {i["id"]: i for i in ordered}
    bound = min((i["similarity"] for i in ordered if "similarity" in i), default=0.0)
    own = {k: i.get("coverage", 0.0) + i.get("similarity", bound) for k, i in items.items()}
    ordered = [items[k] for k in holders_first(list(items), own, places_of(by_id))]
    for item in ordered:
        item["fused"] = round(lifted[item["id"]], 5)
    return ordered


def _fill_notes(ranked: list[dict[str, Any]], ctx: RecallContext) -> None:
    """A note that only its context brought gets its own text, scope and date (one query)."""
    bare = {str(i["note"]): i for i in ranked if i.get("note") and "text" not in i}
    if not bare:
        return
    for note in Note.objects.filter(architect=ctx.architect, pk__in=list(bare)):
        bare[str(note.pk)].update(
            text=note.text,
            scope=note.scope,
            created_at=note.created_at.isoformat(),
            source="notes",
        )


def _mark_current(ranked: list[dict[str, Any]], ctx: RecallContext) -> None:
    """Notes replaced by a newer one are history: marked, never the first answer, and the note
    that holds now goes right before them (fetched when the search did not bring it): the newer
    note is about the same thing, so it answers as far as the older one did."""
    ids = [i["note"] for i in ranked if i.get("note")]
    replaced = dict(
        Note.objects.filter(
            architect=ctx.architect, pk__in=ids, superseded_by__isnull=False
        ).values_list("pk", "superseded_by")
    )
    for item in ranked:
        if item.get("note"):
            by = replaced.get(Note._meta.pk.to_python(item["note"]))
            item["current"] = by is None
            item["superseded_by"] = str(by) if by else None
    if not replaced:
        return
    placed = {str(i["note"]) for i in ranked if i.get("note") and i["current"]}
    position = 0
    while position < len(ranked):
        item = ranked[position]
        if item.get("current", True) or not item.get("note"):
            position += 1
            continue
        now = _holding_now(ctx, item["superseded_by"])
        if now is not None and str(now.pk) in placed:  # already ranked: move it up
            index = next(i for i, r in enumerate(ranked) if str(r.get("note")) == str(now.pk))
            if index > position:
                moved = ranked.pop(index)
                moved["answers"] = moved["answers"] or item["answers"]
                ranked.insert(position, moved)
                position += 1
        elif now is not None and scopes.fits(now.scope, ctx.scope):
            ranked.insert(
                position,
                {
                    "id": f"notes:{now.pk}",
                    "note": str(now.pk),
                    "text": now.text,
                    "scope": now.scope,
                    "created_at": now.created_at.isoformat(),
                    "source": "notes",
                    "answers": item["answers"],
                    "current": True,
                    "superseded_by": None,
                    "replaces": item["note"],
                },
            )
            placed.add(str(now.pk))
            position += 1
        position += 1


def _newest_first(ranked: list[dict[str, Any]], ctx: RecallContext) -> None:
    """A value changed in other words that the notes do not link (``supersede.newest_first``):
    the newer note goes before the older for this question, and takes its answer."""
    notes = [i for i in ranked if i.get("note") and i.get("source") == "notes"]
    if len(notes) < 2:
        return
    bound = min((i["similarity"] for i in notes if "similarity" in i), default=0.0)
    told = [
        SimpleNamespace(
            text=str(i.get("text", "")),
            scope=i.get("scope") or [],
            created_at=datetime.fromisoformat(str(i["created_at"])),
            superseded_by_id=None if i.get("current", True) else i.get("superseded_by"),
        )
        for i in notes
    ]
    order, updated = supersede.newest_first(
        told, [i.get("similarity", bound) for i in notes], ctx.text
    )
    if not updated:
        return
    for older, newer in updated.items():
        notes[newer]["answers"] = notes[newer]["answers"] or notes[older]["answers"]
        notes[older]["current"] = False
        notes[older]["updated_by"] = str(notes[newer]["note"])
    placed = {id(i) for i in notes}
    slots = [k for k, i in enumerate(ranked) if id(i) in placed]
    for slot, index in zip(slots, order, strict=True):
        ranked[slot] = notes[index]


def _holding_now(ctx: RecallContext, note_id: str | None) -> Note | None:
    """The note that holds now in the chain ``note_id`` (the replacing note) belongs to."""
    note = Note.objects.filter(architect=ctx.architect, pk=note_id).first() if note_id else None
    return supersede.current(note) if note is not None else None


def _as_notes(ranked: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Candidates keep the ladder's fusion key: a note is its note id, else its own id."""
    return [{**item, "id": item.get("note") or item["id"], "level": 4} for item in ranked]
