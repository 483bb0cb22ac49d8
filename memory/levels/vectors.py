"""Level 4: search by meaning in the vectors — only when the caller asks for depth ``deep``.

Notes and records, summaries, and object cards, each against a relevance floor measured on our
embedder (e5 similarities sit close together, so a floor taken from another model means nothing;
see bench/objects_threshold.py and PASSPORT.md). Best hits first; an object as the best hit
makes the answer an object: its id, media type and summary.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from memory.i18n import Text
from memory.ladder import Outcome, ReportEntry
from memory.levels import store_errors
from memory.levels.context import RecallContext
from memory.models import MemoryObject
from memory.stores.vectors import KINDS, vectors

LIMIT = 5

_FOUND = Text(ru="Найдено по смыслу:", en="Found by meaning:")
_BELOW = Text(
    ru="лучшее сходство {best:.3f} ниже порога {floor:.3f}",
    en="the best similarity {best:.3f} is below the floor {floor:.3f}",
)
_NONE = Text(ru="коллекция пуста", en="the collection is empty")
_ABOVE = Text(
    ru="{count} выше порога {floor:.3f}, лучшее {best:.3f}",
    en="{count} above the floor {floor:.3f}, best {best:.3f}",
)


def floor(kind: str) -> float:
    return settings.OBJECTS_MIN_SCORE if kind == "objects" else settings.VECTOR_MIN_SCORE


def search(ctx: RecallContext) -> Outcome:
    report: list[ReportEntry] = []
    kept: list[tuple[str, Any]] = []
    trace: list[dict[str, Any]] = []
    for kind in KINDS:
        try:
            hits = vectors().search(
                kind=kind, architect_id=ctx.architect.pk, query=ctx.text, limit=LIMIT
            )
        except Exception as error:  # a store error is this level's report entry, never a 500
            report.append(
                ReportEntry(4, "vectors", kind, "failed", note=store_errors.reason(error))
            )
            trace.append(
                {"level": 4, "event": "failed", "kind": kind, "error": getattr(error, "code", "")}
            )
            continue
        good = [h for h in hits if h.score >= floor(kind)]
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
        elif not good:
            note = _BELOW(ctx.lang, best=hits[0].score, floor=floor(kind))
        else:
            note = _ABOVE(ctx.lang, count=len(good), floor=floor(kind), best=good[0].score)
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
        kept += [(kind, h) for h in good]
    if not kept:
        return Outcome(found=False, report=report, trace=trace)
    kept.sort(key=lambda pair: -pair[1].score)
    lines = [_FOUND(ctx.lang)]
    data = []
    for kind, hit in kept[:LIMIT]:
        lines.append(f"- [{kind} {hit.score:.3f}] {hit.payload.get('text', '')[:400]}")
        data.append(
            {
                "kind": kind,
                "score": round(hit.score, 4),
                "id": hit.id,
                **{k: v for k, v in hit.payload.items() if k != "architect"},
            }
        )
    best_kind, best = kept[0]
    answer_object = None
    if best_kind == "objects":
        found = MemoryObject.objects.filter(
            pk=best.payload.get("object"), architect=ctx.architect
        ).first()
        if found is not None:
            answer_object = {
                "id": str(found.pk),
                "media_type": found.media_type,
                "summary": found.summary or found.description or found.name,
            }
    return Outcome(
        found=True,
        kind="probabilistic",
        form="object" if answer_object else "text",
        text="\n".join(lines),
        data={"hits": data},
        object=answer_object,
        report=report,
        trace=trace,
    )
