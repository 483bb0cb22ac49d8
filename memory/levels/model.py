"""Level 2: one model call with no history. The model gets the question, the architect's catalog
and level 1's candidates, may use the read tools, and answers with a kind — as JSON checked
against a schema, with one repair attempt. A failed call is reported, and the ladder goes on."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings

from memory import ladder, model
from memory.agent import instruction
from memory.agent import tools as agent_tools
from memory.i18n import Text
from memory.ladder import Outcome, ReportEntry
from memory.levels import graph as graph_level
from memory.levels.context import RecallContext
from memory.model.base import NOT_CONFIGURED, ModelError, ToolGrant
from memory.model.structured import ask_json
from memory.model.threads import thread_record
from memory.models import ToolCall
from memory.shape import selectors

TOOLS = agent_tools.READ_TOOLS
# Every tool the call is offered comes with a skill that describes it: the tables' reads with
# use-tables, ask_graph with the graph's skill.
SKILLS = ("use-tables", graph_level.SKILL)

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["found", "kind", "text"],
    "properties": {
        "found": {"type": "boolean"},
        "kind": {"enum": list(ladder.KINDS)},
        "text": {"type": "string"},
        "data": {},
        # An answer computed from the tables (sums, totals, a breakdown): the rows of the
        # computation, one object per row. The relearning cycle keeps them as a table.
        "computed": {"type": "array", "items": {"type": "object"}},
        "missing": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["dimension", "why"],
                "properties": {
                    "dimension": {"enum": ["geo", "calendar"]},
                    "why": {"type": "string"},
                },
            },
        },
    },
}

_TASK = (
    "Задача — ответить на вопрос по памяти архитектора: по каталогу таблиц, кандидатам первого "
    "уровня и, если нужно, инструментам чтения. Нет ответа в памяти — found=false. "
    "kind: affirmative — память говорит это прямо; probabilistic — вывод или неполное совпадение; "
    "parameter_dependent — ответ зависит от места или даты, которых нет (назови в missing). "
    "read_table отдаёт только строки, что подходят к охвату вопроса; строка с scope_unknown "
    "может не действовать там, где спрошено, а строка с scope_missing действует лишь там, "
    "чего вопрос не назвал, — такой ответ parameter_dependent. "
    "Если ответ посчитан по таблицам (суммы, итоги, детализация), положи строки расчёта в computed: "
    "по объекту на строку, с итогом последней строкой."
)
_NO_MODEL = NOT_CONFIGURED
_ANSWERED = Text(
    ru="модель ответила по каталогу и таблицам", en="the model answered from the catalog and tables"
)
_EMPTY = Text(ru="модель не нашла ответа в памяти", en="the model found no answer in memory")


def available() -> str | None:
    return None if model.configured() else _NO_MODEL(settings.MEMORY_LANG)


def _prompt(ctx: RecallContext) -> str:
    parts = [
        f"Вопрос: «{ctx.text}»",
        f"Язык ответа: {ctx.lang}",
        "Каталог: " + json.dumps(selectors.catalog_summary(ctx.architect), ensure_ascii=False),
        "Кандидаты первого уровня (заметки): " + json.dumps(ctx.level1_notes, ensure_ascii=False),
    ]
    if ctx.scope:
        parts.append("Охват вопроса: " + json.dumps(ctx.scope, ensure_ascii=False))
    return "\n".join(parts)


def search(ctx: RecallContext) -> Outcome:
    backend = model.backend()
    grant = ToolGrant(
        architect_id=ctx.architect.pk, run_id=str(ctx.run.pk) if ctx.run else "", tools=TOOLS
    )
    try:
        value, result = ask_json(
            backend,
            prompt=_prompt(ctx),
            system=instruction.system_prompt(SKILLS, extra=_TASK),
            schema=ANSWER_SCHEMA,
            tools=grant,
            thread=None,  # level 2 has no history
            timeout=settings.MODEL_TURN_TIMEOUT,
        )
    except ModelError as error:
        entry = ReportEntry(
            2, "model", backend.name, "failed", note=f"{error.code}: {error.message}"
        )
        return Outcome(
            found=False,
            report=[entry],
            trace=[{"level": 2, "event": "failed", "error": error.code}],
            usage=error.usage,  # a failed call is counted on the run all the same
            skills=list(SKILLS),
        )
    thread_record(architect=ctx.architect, backend=backend, result=result)
    called = (
        list(ToolCall.objects.filter(run=ctx.run).values_list("tool", flat=True)) if ctx.run else []
    )
    found = bool(value["found"])
    entry = ReportEntry(
        2,
        "model",
        backend.name,
        "answered" if found else "empty",
        returned=1 if found else 0,
        kind=value["kind"] if found else None,
        note=(_ANSWERED if found else _EMPTY)(ctx.lang),
    )
    missing = [{"parameter": "scope", **m} for m in value.get("missing", [])]
    return Outcome(
        found=found,
        kind=value["kind"],
        form="data" if value.get("data") is not None else "text",
        text=value["text"],
        data=value.get("data"),
        report=[entry],
        trace=[
            {
                "level": 2,
                "event": "model",
                "turns": result.turns,
                "tools": called,
                "thread": result.thread,
            }
        ],
        missing=missing,
        computed=[r for r in value.get("computed") or [] if isinstance(r, dict)] or None
        if found
        else None,
        usage=result,
        thread=result.thread,
        tools=called,
        skills=list(SKILLS),
    )
