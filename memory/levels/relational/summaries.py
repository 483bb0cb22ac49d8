"""Level 1's summaries: what an earlier expensive answer taught (the relearning cycle) answers
the question it holds, when no note does; its artifact object comes with it."""

from __future__ import annotations

from typing import Any

from memory import relevance
from memory import scope as scopes
from memory.i18n import Text
from memory.knowledge import objects as objects_service
from memory.knowledge import summaries
from memory.ladder import KINDS, Kind, Outcome, ReportEntry
from memory.levels.context import RecallContext
from memory.levels.relational.words import MATCHED

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
    missing = scopes.scope_missing(
        [summary.scope], ctx.scope, lang=ctx.lang, unknown=scopes.unknown(summary.scope, ctx.scope)
    )
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
            note=MATCHED(ctx.lang, words=", ".join(best.matched)),
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
