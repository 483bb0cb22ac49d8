"""remember: the statement is kept verbatim first, so nothing is lost whatever happens next;
then, when a model is configured, the phrase is parsed (no tools) and one model turn with the
write tools, following skill use-tables, decides column or table and writes.

What the tables got is read from the tools' own records of this run, never from the model's
account of its work.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from memory import language, model
from memory.agent import instruction
from memory.agent import tools as agent_tools
from memory.auth import Caller
from memory.contract.params import Parsed
from memory.contract.version import CONTRACT_VERSION
from memory.errors import MemoryServiceError
from memory.i18n import Text
from memory.knowledge import fill
from memory.knowledge.notes import note_create
from memory.model.base import NOT_CONFIGURED, ModelError, ModelResult, ThreadNotFound, ToolGrant
from memory.model.parse import phrase_parse
from memory.model.threads import thread_check, thread_record
from memory.models import Note, OutboxItem, Run, ShapeEntry, ToolCall
from memory.services import denial, idempotency, relearning
from memory.services.cycle import frame, guarded, open_run, read_params, take_verdict
from memory.services.evolution import measure, share
from memory.services.runs import run_close
from memory.shape import names
from memory.shape.tools import TableChange, WriteReport, promote_to_list
from memory.stores import outbox

log = logging.getLogger(__name__)

SKILLS = ("use-tables", "naming", "use-objects")  # the turn is offered keep_object
# The tools the remember turn is offered: the writes it may make and the catalog it reads. Never
# write_candidate (the evolution's own runs only): a tool refused at call time is not offered.
TOOLS = (
    *(t for t in agent_tools.WRITE_TOOLS if t not in agent_tools.EVOLVE_TOOLS),
    "read_catalog",
    "read_table",
)

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
_TABLE_FAILED = Text(
    ru="таблица не создана, фраза сохранена заметкой: {reason}",
    en="the table was not created; the phrase is kept as a note: {reason}",
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


def _prompt(request: dict[str, Any], phrase: dict[str, Any] | None) -> str:
    lines = [_TASK(request["lang"]), f"Фраза: «{request['text']}»"]
    if request.get("scope"):
        lines.append(f"Охват: {json.dumps(request['scope'], ensure_ascii=False)}")
    if request.get("table"):
        lines.append(
            f"Зовущий требует таблицу «{request['table']}»: она создана, пиши в неё (promote_to_list)."
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


def _request(parsed: Parsed, demanded: names.Name | None) -> dict[str, Any]:
    """What the model's part of a remember reads of the request (a shadow run replays it)."""
    return {
        "text": parsed.get("text"),
        "scope": parsed.get("scope", []),
        "lang": parsed.lang,
        "table": demanded.label if demanded is not None else "",
        "thread": parsed.get("thread") or "",
    }


def think_again(run: Run, request: dict[str, Any]) -> ModelResult:
    """The model's part of a remember once more, for a shadow run (memory.services.evolution):
    the same parse and the same turn with tools, under the candidate skill. The write tools see
    the shadow run and write nothing; no note, thread or store is touched."""
    backend = model.backend()
    usage: ModelResult | None = None
    try:
        phrase, usage = phrase_parse(
            backend, request["text"], architect_id=run.architect_id, run_id=str(run.pk)
        )
        turn = backend.run(
            prompt=_prompt(
                request,
                {"entities": phrase.entities, "relations": phrase.relations, "by": "model"},
            ),
            system=instruction.system_prompt(SKILLS),
            tools=ToolGrant(architect_id=run.architect_id, run_id=str(run.pk), tools=TOOLS),
            thread=None,
            timeout=settings.MODEL_TURN_TIMEOUT,
        )
    except ModelError as error:
        raise error.spent(usage) from error
    return usage.add(turn)


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
            prompt=_prompt(_request(parsed, demanded), note.entities),
            system=instruction.system_prompt(SKILLS),
            tools=ToolGrant(architect_id=caller.architect.pk, run_id=str(run.pk), tools=TOOLS),
            thread=parsed.get("thread"),
            timeout=settings.MODEL_TURN_TIMEOUT,
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
        usage = usage.add(error.usage) if usage is not None else error.usage
        return _model_failed(error, usage.turns if usage else 0), usage


def remember(*, caller: Caller, data: Any, idempotency_key: str | None = None) -> dict[str, Any]:
    """Keep the phrase; then lay it out and fill the stores.

    Everything that can be computed is computed BEFORE the write transaction (lemmas, the NER),
    so the database's write lock is held for the inserts only. The run, the note, its lemmas, its
    outbox rows, a verdict it carries and its idempotency record commit together, or none does.
    After the commit nothing turns the answer into an error: a later failure is reported in its
    own part of the answer (the store's ``failed``, the model's ``failed``) and on the run.
    """
    started = time.perf_counter()
    parsed = read_params("remember", data)
    lang = parsed.lang
    if idempotency_key is not None:
        idempotency.check_key(idempotency_key, lang)
        first = idempotency.replay(
            architect=caller.architect, key=idempotency_key, data=data, lang=lang
        )
        if first is not None:
            raise AlreadyAnswered(*first)
    backend = model.backend()
    if parsed.has("deny") and not parsed.has("thread") and model.configured():
        # A denial naming a model conversation goes into that conversation (PASSPORT.md §16).
        named = denial.thread_named(parsed.get("deny"), caller.architect)
        try:
            if named is not None:
                thread_check(architect=caller.architect, thread=named, backend=backend)
                parsed.values["thread"] = named
        except ThreadNotFound:
            pass  # another backend's conversation: the denial still stands, in a new one
    if parsed.has("thread"):
        # Refused before anything is written: the caller resends with a thread of its own.
        thread_check(architect=caller.architect, thread=parsed.get("thread"), backend=backend)
    demanded = _table_demand(parsed, caller)
    text = parsed.get("text")
    terms = language.terms(text)
    # Without a model the offline NER names the note's things: in the request when the stores
    # are filled in it, behind the answer (at delivery) when capture comes first.
    behind = settings.STORES_FILL == "behind"
    named = None if model.configured() or behind else fill.named_by_ner(text)

    with transaction.atomic():
        run = open_run("remember", parsed, caller)
        note = note_create(
            architect=caller.architect,
            text=text,
            scope=parsed.get("scope", []),
            sender=caller.name,
            run=run,
            terms=terms,
            entities=named,
            at=parsed.get("said_at"),
        )
        # Without a model the note's things are known now, and go out with the note. With one,
        # the vectors go now and the graph after the model's parse (the sweep completes it
        # from the NER if the process dies in between).
        pending = fill.note_to_stores(note=note, run=run, graph=named is not None)
        if behind and not model.configured():
            pending.append(outbox.graph_note(note=note, run=run))
        take_verdict(parsed, caller, run)
        record = (
            idempotency.reserve(
                architect=caller.architect, key=idempotency_key, data=data, run=run, lang=lang
            )
            if idempotency_key is not None
            else None
        )

    try:
        with guarded(run):  # only a lost thread is raised from here on; it closes the run as failed
            answer = _after_commit(parsed, caller, run, note, demanded, pending, started)
    except MemoryServiceError as refusal:
        if record is not None:  # a retry gets the same refusal, not a second note
            body = {"contract": CONTRACT_VERSION, "error": refusal.as_dict()}
            _quietly("idempotency record", idempotency.settle, record, body, refusal.status)
        raise
    if record is not None:
        _quietly("idempotency record", idempotency.settle, record, answer)
    return answer


class AlreadyAnswered(Exception):
    """The first answer given for an idempotency key, to be sent again as it was."""

    def __init__(self, answer: dict[str, Any], status: int) -> None:
        super().__init__("replayed")
        self.answer = answer
        self.status = status


def _quietly(what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a step after the commit; a failure is logged and returned, never raised."""
    try:
        return fn(*args, **kwargs)
    except Exception as error:
        log.exception("remember: %s failed after the note was committed", what)
        return _Failure(f"{what}: {type(error).__name__}: {error}"[:2000])


@dataclass
class _Failure:
    reason: str


def _after_commit(
    parsed: Parsed,
    caller: Caller,
    run: Run,
    note: Note,
    demanded: names.Name | None,
    pending: list[OutboxItem],
    started: float,
) -> dict[str, Any]:
    lang = parsed.lang
    report = WriteReport(tables=[TableChange("notes", "notes", "insert", 1, note=_NOTE(lang))])
    failures: list[str] = []
    if demanded is not None:
        made = _quietly(
            "create_table",
            promote_to_list,
            architect=caller.architect,
            kind=demanded.label,
            basis=parsed.get("text"),
            run=run,
            allow_empty=True,
        )
        if isinstance(made, _Failure):
            failures.append(made.reason)
            parsed.accept("create_table", _TABLE_FAILED(lang, reason=made.reason))
        else:
            report.merge(made)
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
            _quietly(
                "run close", _close, run, parsed, report, started, None, ["tables"], error=error
            )
            raise
        except Exception as error:  # not a refusal of the model: a fault on our side
            log.exception("remember: the model step failed after the note was committed")
            model_block = _model_failed(
                ModelError(f"{type(error).__name__}: {error}", code="model_step_failed")
            )
        got = _quietly("tool report", _tool_report, run)
        if isinstance(got, _Failure):
            failures.append(got.reason)
            model_block["tools"] = []
        else:
            tool_report, called = got
            report.merge(tool_report)
            model_block["tools"] = called
    else:
        model_block = {"called": False, "status": "skipped", "note": _NO_MODEL(lang)}

    # The stores are filled by code, after the model, from the note and the tools' records.
    stores = _fill_stores(parsed, run, note, pending, failures)
    relearned = _deny(parsed, caller, run) if parsed.has("deny") else None

    answer: dict[str, Any] = {
        **frame("remember", run),
        "stored": _stored(note),
        **report.as_dict(),
        "model": model_block,
        "stores": stores,
        "params": parsed.fates_dict(),
    }
    if relearned is not None:
        answer["relearned"] = relearned
    if usage is not None and usage.thread and model_block.get("status") == "done":
        answer["thread"] = usage.thread
    if parsed.get("trace"):
        trace = _quietly("trace", _trace, note, run)
        answer["trace"] = [] if isinstance(trace, _Failure) else trace
    answer["seconds"] = round(time.perf_counter() - started, 4)
    _quietly(
        "run close",
        _close,
        run,
        parsed,
        report,
        started,
        usage,
        ["tables", *stores],
        answer=answer,
        failures=failures,
    )
    if usage is not None:  # the model's part ran: a candidate of its skills may replay it
        share.offer(run, request=_request(parsed, demanded), answer=lambda: measure.writes_of(run))
    return answer


def _deny(parsed: Parsed, caller: Caller, run: Run) -> dict[str, Any] | None:
    """A denial of an earlier conclusion (PASSPORT.md §16), after the words are kept as a
    note. Nothing to attach it to is the parameter's fate, never an error answer."""
    try:
        note, kept = denial.deny(
            parsed.get("deny"),
            words=parsed.get("text"),
            architect=caller.architect,
            run=run,
            lang=parsed.lang,
        )
    except denial.Refused as why:
        parsed.not_supported("deny", str(why))
        return None
    except Exception as error:
        log.exception("remember: the denial's relearning cycle failed after the note committed")
        kept = relearning.failed(error)
        parsed.accept("deny", _DENY_FAILED(parsed.lang, reason=kept["note"]))
        return kept
    parsed.accept("deny", note)
    return kept


_DENY_FAILED = Text(
    ru="отрицание не записано: цикл дообучения сломался ({reason}); фраза сохранена как заметка",
    en="the denial is not recorded: the relearning cycle broke ({reason}); the phrase is kept as "
    "a note",
)


def _stored(note: Note) -> dict[str, Any]:
    stored: dict[str, Any] = {"note": str(note.pk)}
    replaced = getattr(note, "replaced", [])
    if replaced:
        stored["supersedes"] = [str(n.pk) for n in replaced]
    return stored


def _fill_stores(
    parsed: Parsed, run: Run, note: Note, pending: list[OutboxItem], failures: list[str]
) -> dict[str, dict[str, Any]]:
    """Queue what the model step added for the graph (in one transaction), then deliver."""

    def more() -> list[OutboxItem]:
        with transaction.atomic():
            extra: list[OutboxItem] = []
            if not any(item.store == "graph" for item in pending):
                extra += fill.note_graph(note=note, run=run)
            known = [i.pk for i in pending + extra]
            extra += list(OutboxItem.objects.filter(run=run, status="queued").exclude(pk__in=known))
            structured = fill.writes_to_graph(run=run, phrase=parsed.get("text"))
            if structured is not None:
                extra.append(structured)
            return extra

    added = _quietly("graph items", more)
    stores = fill.deliver(pending + ([] if isinstance(added, _Failure) else added))
    if isinstance(added, _Failure):
        failures.append(added.reason)
        graph = stores.setdefault("graph", {"status": "failed", "items": 0})
        graph.update(status="failed", note=added.reason)
    return stores


def _model_failed(error: ModelError, turns: int = 0) -> dict[str, Any]:
    backend = model.backend()
    return {
        "called": True,
        "backend": backend.name,
        "status": "failed",
        "turns": turns,
        "error": {"code": error.code, "message": error.message, "retryable": error.retryable},
    }


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
    failures: list[str] = (),  # type: ignore[assignment]
) -> None:
    reasons = list(failures)
    if error is not None:
        reasons.insert(0, f"{error.code}: {error.message}")
    elif answer is not None and answer["model"].get("status") == "failed":
        reasons.insert(
            0, f"{answer['model']['error']['code']}: {answer['model']['error']['message']}"
        )
    if answer is not None:
        reasons += [
            f"{store}: {entry.get('note', '')}"
            for store, entry in answer["stores"].items()
            if entry["status"] == "failed"
        ]
    run_close(
        run,
        usages=[usage],
        error="; ".join(reasons),
        failed=error is not None,
        stores=stores,
        relearned=(answer or {}).get("relearned", {}),
        params=parsed.fates_dict(),
        report=report.as_dict()["tables"],
        seconds=round(time.perf_counter() - started, 4),
        tools=sorted(set(ToolCall.objects.filter(run=run).values_list("tool", flat=True))),
        skills=list(SKILLS) if usage is not None else run.skills,
    )
