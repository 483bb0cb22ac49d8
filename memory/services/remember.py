"""remember: the statement is kept verbatim first, so nothing is lost whatever happens next."""

from __future__ import annotations

import time
from typing import Any

from django.db import transaction

from memory import language
from memory.auth import Caller
from memory.i18n import Text
from memory.services.cycle import frame, open_run, read_params, take_verdict
from memory.services.notes import note_create

_NOTE = Text(ru="фраза сохранена дословно", en="the phrase is kept verbatim")


def remember(*, caller: Caller, data: Any) -> dict[str, Any]:
    started = time.perf_counter()
    parsed = read_params("remember", data)
    lang = parsed.lang
    with transaction.atomic():
        run = open_run("remember", parsed, caller)
        note = note_create(
            architect=caller.architect,
            text=parsed.get("text"),
            scope=parsed.get("scope", []),
            sender=caller.name,
            run=run,
        )
    take_verdict(parsed, caller, run)

    tables = [{"table": "notes", "action": "insert", "rows": 1, "note": _NOTE(lang)}]
    answer: dict[str, Any] = {
        **frame("remember", run),
        "stored": {"note": str(note.pk)},
        "tables": tables,
        "tables_created": [],
        "new_tables_filled": [],
        "params": parsed.fates_dict(),
    }
    if parsed.get("trace"):
        answer["trace"] = [
            {"event": "note", "note": str(note.pk), "keywords": language.keywords(note.text)}
        ]
    seconds = round(time.perf_counter() - started, 4)
    answer["seconds"] = seconds
    run.stores = ["tables"]
    run.params = answer["params"]
    run.report = tables
    run.seconds = seconds
    run.save(update_fields=["stores", "params", "report", "seconds"])
    return answer
