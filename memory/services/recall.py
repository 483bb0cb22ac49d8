"""recall: climb the ladder from the cheapest level, stop at the first that answers."""

from __future__ import annotations

import time
from typing import Any

from memory import ladder, language
from memory.auth import Caller
from memory.i18n import Text
from memory.levels import RecallContext, steps_for
from memory.services.cycle import frame, guarded, open_run, read_params, take_verdict

_CAPPED = Text(
    ru="этот ключ разрешает глубину до {cap}; просили {asked}, выполнено как {granted}",
    en="this key allows depth up to {cap}; asked {asked}, ran as {granted}",
)
_SKIPPED = Text(ru="уровень {level} пропущен: {reason}", en="level {level} skipped: {reason}")
_NOT_FOUND = Text(
    ru="В памяти ничего не найдено (пройдено уровней: {used} из {top} разрешённых).",
    en="Nothing found in memory (levels run: {used} of {top} allowed).",
)


def recall(*, caller: Caller, data: Any) -> dict[str, Any]:
    started = time.perf_counter()
    parsed = read_params("recall", data)
    run = open_run("recall", parsed, caller)
    with guarded(run):
        return _recall(parsed, caller, run, started)


def _recall(parsed: Any, caller: Caller, run: Any, started: float) -> dict[str, Any]:
    lang = parsed.lang
    take_verdict(parsed, caller, run)

    grant = ladder.grant_depth(parsed.get("depth", ladder.DEFAULT_DEPTH), caller.depth_cap)
    ctx = RecallContext(
        architect=caller.architect,
        text=parsed.get("text"),
        keywords=language.keywords(parsed.get("text")),
        scope=parsed.get("scope", []),
        lang=lang,
        run=run,
    )
    climb = ladder.climb(steps_for(ctx), top=grant.top_level, lang=lang)

    if parsed.has("depth"):
        notes = []
        if grant.capped:
            notes.append(_CAPPED(lang, cap=grant.cap, asked=grant.asked, granted=grant.granted))
        notes += [
            _SKIPPED(lang, level=e.level, reason=e.note)
            for e in climb.report
            if e.status == "skipped"
        ]
        parsed.accept("depth", "; ".join(notes))

    final = climb.final
    if final is not None:
        kind = final.kind or "probabilistic"
        answer_body: dict[str, Any] = {"form": final.form, "found": True, "text": final.text}
        if final.data is not None:
            answer_body["data"] = final.data
        if final.object is not None:
            answer_body["object"] = final.object
        missing = final.missing
    else:
        # Absence is not certainty: a level not run, or not allowed, might still know.
        kind = "probabilistic"
        answer_body = {
            "form": "text",
            "found": False,
            "text": _NOT_FOUND(lang, used=climb.depth_used, top=grant.top_level),
        }
        missing = []

    answer: dict[str, Any] = {
        **frame("recall", run),
        "kind": kind,
        "answer": answer_body,
        "depth_used": climb.depth_used,
        "report": [entry.as_dict() for entry in climb.report],
        "missing": missing,
        "params": parsed.fates_dict(),
    }
    if parsed.get("trace"):
        answer["trace"] = climb.trace
    usages = [o.usage for o in climb.outcomes if o.usage is not None]
    turns = sum(u.turns for u in usages)
    thread = next((o.thread for o in reversed(climb.outcomes) if o.thread), "")
    if thread:
        answer["thread"] = thread
    seconds = round(time.perf_counter() - started, 4)
    answer["seconds"] = seconds

    run.depth_asked = grant.asked
    run.depth_granted = grant.granted
    run.depth_used = climb.depth_used
    run.kind = kind
    run.found = final is not None
    run.model_turns = turns
    run.thread = thread
    run.tokens_in = sum(u.tokens_in for u in usages)
    run.tokens_out = sum(u.tokens_out for u in usages)
    run.cache_read_tokens = sum(u.cache_read_tokens for u in usages)
    run.cache_creation_tokens = sum(u.cache_creation_tokens for u in usages)
    costs = [u.cost_usd for u in usages if u.cost_usd is not None]
    run.cost_usd = sum(costs) if costs else None
    run.seconds = seconds
    run.stores = sorted({e.store for e in climb.report if e.status != "skipped"})
    run.tools = sorted({t for o in climb.outcomes for t in o.tools})
    run.skills = sorted({s for o in climb.outcomes for s in o.skills})
    run.params = answer["params"]
    run.report = answer["report"]
    run.status = "done"
    run.save()
    return answer
