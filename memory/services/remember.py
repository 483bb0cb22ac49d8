"""remember: the statement is kept verbatim first, so nothing is lost whatever happens next;
then, when a model is configured, the phrase is parsed (no tools) and one model turn with the
write tools, following skill use-tables, decides column or table and writes.

What the tables got is read from the tools' own records of this run, never from the model's
account of its work.
"""

from __future__ import annotations

import json
import time
from typing import Any

from django.conf import settings
from django.db import transaction

from memory import language, model
from memory.agent import instruction
from memory.agent import tools as agent_tools
from memory.auth import Caller
from memory.contract.params import Parsed
from memory.errors import MemoryServiceError
from memory.i18n import Text
from memory.model.base import NOT_CONFIGURED, ModelError, ModelResult, ThreadNotFound, ToolScope
from memory.model.parse import phrase_parse
from memory.model.threads import thread_check, thread_record
from memory.models import Note, OutboxItem, Run, ShapeEntry, ToolCall
from memory.services import knowledge
from memory.services.cycle import frame, open_run, read_params, take_verdict
from memory.services.notes import note_create
from memory.shape import names
from memory.shape.tools import TableChange, WriteReport, promote_to_list

SKILLS = ("use-tables", "naming")
TOOLS = (*agent_tools.WRITE_TOOLS, "read_catalog", "read_table")

_NOTE = Text(ru="фраза сохранена дословно", en="the phrase is kept verbatim")
_NO_MODEL = Text(
    ru=NOT_CONFIGURED.ru + ": фраза сохранена заметкой, по таблицам не разложена",
    en=NOT_CONFIGURED.en + ": the phrase is kept as a note, not laid out in tables",
)
_TABLE_READY = Text(
    ru="таблица «{label}» ({table}) есть; модель получила указание писать в неё",
    en="table «{label}» ({table}) exists; the model was told to write into it",
)
_TABLE_EMPTY = Text(
    ru="таблица «{label}» ({table}) есть, но без модели некому разложить фразу по строкам",
    en="table «{label}» ({table}) exists, but with no model nothing lays the phrase out in rows",
)
_TASK = Text(
    ru="Запомни сказанное архитектором, разложив по таблицам памяти (навык use-tables). "
    "Основание для записей — сама фраза.",
    en="Remember what the architect said by laying it out in the memory's tables (skill "
    "use-tables). The basis of every write is the phrase itself.",
)


def _table_demand(parsed: Parsed, caller: Caller) -> names.Name | None:
    """``create_table`` names a table through the naming function; a refused name is bad_form."""
    label = parsed.get("create_table")
    if label is None:
        return None
    existing = [
        names.Name(label=e.label, name=e.name, key=e.key)
        for e in ShapeEntry.objects.filter(architect=caller.architect, kind="table")
    ]
    try:
        return names.check(label, existing=existing)
    except names.NameRefused as refusal:
        parsed.refuse("create_table", refusal.message)
        return None


def _prompt(parsed: Parsed, demanded: names.Name | None, phrase: dict[str, Any] | None) -> str:
    lines = [_TASK(parsed.lang), f"Фраза: «{parsed.get('text')}»"]
    if parsed.get("scope"):
        lines.append(f"Охват: {json.dumps(parsed.get('scope'), ensure_ascii=False)}")
    if demanded is not None:
        lines.append(
            f"Зовущий требует таблицу «{demanded.label}»: она создана, пиши в неё (promote_to_list)."
        )
    if phrase:
        lines.append(f"Разбор фразы: {json.dumps(phrase, ensure_ascii=False)}")
    return "\n".join(lines)


def _tool_report(run: Run) -> tuple[WriteReport, list[str]]:
    """What the tools recorded for this run: the write reports of the calls that succeeded."""
    report = WriteReport()
    called: list[str] = []
    for call in ToolCall.objects.filter(run=run):
        called.append(call.tool)
        if call.error or not isinstance(call.result, dict) or "tables" not in call.result:
            continue
        report.merge(
            WriteReport(
                tables=[TableChange(**t) for t in call.result["tables"]],
                tables_created=list(call.result.get("tables_created", [])),
                new_tables_filled=list(call.result.get("new_tables_filled", [])),
            )
        )
    return report, called


def _think(
    parsed: Parsed, caller: Caller, run: Run, note: Note, demanded: names.Name | None
) -> tuple[dict[str, Any], ModelResult | None]:
    """The model's part. Failures are reported, never raised, except a lost thread."""
    backend = model.backend()
    usage: ModelResult | None = None
    try:
        phrase, usage = phrase_parse(
            backend, parsed.get("text"), architect_id=caller.architect.pk, run_id=str(run.pk)
        )
        note.entities = {"entities": phrase.entities, "relations": phrase.relations, "by": "model"}
        note.save(update_fields=["entities"])
        turn = backend.run(
            prompt=_prompt(parsed, demanded, note.entities),
            system=instruction.system_prompt(SKILLS),
            tools=ToolScope(architect_id=caller.architect.pk, run_id=str(run.pk), tools=TOOLS),
            thread=parsed.get("thread"),
            timeout=settings.MODEL_PARSE_TIMEOUT,
        )
        usage = usage.add(turn)
        thread_record(architect=caller.architect, backend=backend, result=turn)
        return {
            "called": True,
            "backend": backend.name,
            "status": "done",
            "turns": usage.turns,
        }, usage
    except ThreadNotFound:
        raise
    except ModelError as error:
        return (
            {
                "called": True,
                "backend": backend.name,
                "status": "failed",
                "turns": usage.turns if usage else 0,
                "error": {
                    "code": error.code,
                    "message": error.message,
                    "retryable": error.retryable,
                },
            },
            usage,
        )


def remember(*, caller: Caller, data: Any) -> dict[str, Any]:
    started = time.perf_counter()
    parsed = read_params("remember", data)
    lang = parsed.lang
    backend = model.backend()
    if parsed.has("thread"):
        # Refused before anything is written: the caller resends with a thread of its own.
        thread_check(architect=caller.architect, thread=parsed.get("thread"), backend=backend)
    demanded = _table_demand(parsed, caller)
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

    report = WriteReport(tables=[TableChange("notes", "notes", "insert", 1, note=_NOTE(lang))])
    if demanded is not None:
        report.merge(
            promote_to_list(
                architect=caller.architect,
                kind=demanded.label,
                basis=parsed.get("text"),
                run=run,
                allow_empty=True,
            )
        )
        template = _TABLE_READY if model.configured() else _TABLE_EMPTY
        parsed.accept(
            "create_table", template(lang, label=demanded.label, table=f"mem_{demanded.name}")
        )

    usage: ModelResult | None = None
    if model.configured():
        try:
            model_block, usage = _think(parsed, caller, run, note, demanded)
        except ThreadNotFound as error:
            error.details.update({"run": str(run.pk), "stored": {"note": str(note.pk)}})
            _close(run, parsed, report, started, None, ["tables"], error=error)
            raise
        tool_report, called = _tool_report(run)
        report.merge(tool_report)
        model_block["tools"] = called
    else:
        model_block = {"called": False, "status": "skipped", "note": _NO_MODEL(lang)}

    # The stores are filled by code, after the model, from the note and the tools' records.
    pending = knowledge.note_to_stores(note=note, run=run)
    pending += list(
        OutboxItem.objects.filter(run=run, status="queued").exclude(pk__in=[i.pk for i in pending])
    )
    structured = knowledge.writes_to_graph(run=run, phrase=parsed.get("text"))
    if structured is not None:
        pending.append(structured)
    stores = knowledge.deliver(pending)

    answer: dict[str, Any] = {
        **frame("remember", run),
        "stored": {"note": str(note.pk)},
        **report.as_dict(),
        "model": model_block,
        "stores": stores,
        "params": parsed.fates_dict(),
    }
    if usage is not None and usage.thread and model_block.get("status") == "done":
        answer["thread"] = usage.thread
    if parsed.get("trace"):
        answer["trace"] = _trace(note, run)
    answer["seconds"] = _close(
        run, parsed, report, started, usage, ["tables", *stores], answer=answer
    )
    return answer


def _trace(note: Note, run: Run) -> list[dict[str, Any]]:
    trace: list[dict[str, Any]] = [
        {"event": "note", "note": str(note.pk), "keywords": language.keywords(note.text)}
    ]
    if note.entities:
        trace.append({"event": "phrase_parse", **note.entities})
    for call in ToolCall.objects.filter(run=run):
        trace.append(
            {
                "event": "tool",
                "tool": call.tool,
                "arguments": call.arguments,
                "result": call.result,
                "error": call.error,
            }
        )
    return trace


def _close(
    run: Run,
    parsed: Parsed,
    report: WriteReport,
    started: float,
    usage: ModelResult | None,
    stores: list[str],
    *,
    answer: dict[str, Any] | None = None,
    error: MemoryServiceError | None = None,
) -> float:
    seconds = round(time.perf_counter() - started, 4)
    run.stores = stores
    run.params = parsed.fates_dict()
    run.report = report.as_dict()["tables"]
    run.seconds = seconds
    run.tools = sorted(set(ToolCall.objects.filter(run=run).values_list("tool", flat=True)))
    if usage is not None:
        run.skills = list(SKILLS)
        run.model_turns = usage.turns
        run.tokens_in = usage.tokens_in
        run.tokens_out = usage.tokens_out
        run.cache_read_tokens = usage.cache_read_tokens
        run.cache_creation_tokens = usage.cache_creation_tokens
        run.cost_usd = usage.cost_usd
        run.thread = usage.thread
    run.status = "failed" if error is not None else "done"
    if error is not None:
        run.error = f"{error.code}: {error.message}"
    elif answer is not None and answer["model"].get("status") == "failed":
        run.error = f"{answer['model']['error']['code']}: {answer['model']['error']['message']}"
    run.save()
    return seconds
