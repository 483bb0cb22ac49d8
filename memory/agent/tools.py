"""The agent's tools: one registry, served over MCP to the CLI and called in-process by the
HTTP backends. The schema of each tool comes from its signature (never from the instruction);
its description names the occasion and the cost, not the mechanism (PASSPORT.md §12).

A tool acts in the tenant the memory bound for the process or the call — the
architect is never an argument the model could change. Every call is recorded as a
``ToolCall`` by the tool itself: the run's facts come from here, not from the model's account.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, Field, ValidationError, validate_call

from memory import language
from memory.errors import MemoryServiceError
from memory.knowledge.lookup import notes_search
from memory.knowledge.objects import object_keep
from memory.models import Architect, Run, ShadowCase, ShapeEntry, ToolCall
from memory.models.runs import EVOLVE, SHADOW
from memory.shape import selectors
from memory.shape import tools as shape_tools
from memory.shape.claims import Claim
from memory.shape.physical import ROOT_TABLE


class ToolRefused(Exception):
    """A tool call the memory refuses; the message goes back to the model as the tool's error."""


@dataclass
class Reach:
    """What two tools reach above the adapters, handed in at start-up (``memory.apps``), as
    Django fills its app registry: level 3's answer to a question (architect, question, the
    request's scope → the tool's answer), and the candidates the model may write: a second
    version beside a skill, a new skill, new instruction lines."""

    ask_graph: Callable[[Architect, str, list[dict[str, Any]]], dict[str, Any]] | None = None
    write_candidate: Callable[..., Any] | None = None
    propose_skill: Callable[..., Any] | None = None
    propose_instruction: Callable[..., Any] | None = None


REACH = Reach()


def _reached(name: str) -> Callable[..., Any]:
    fn = getattr(REACH, name)
    if fn is None:
        raise ToolRefused(f"{name} is not wired in this process (memory.apps did not run)")
    return fn


@dataclass(frozen=True)
class Tenant:
    architect: Architect
    run: Run | None


_tenant: ContextVar[Tenant | None] = ContextVar("memory_tool_tenant", default=None)
_process_tenant: Tenant | None = None


def bind_process(tenant: Tenant) -> None:
    """The MCP server serves one architect and one run for its whole life."""
    global _process_tenant
    _process_tenant = tenant


@contextmanager
def bound(tenant: Tenant) -> Iterator[None]:
    """In-process tool calls (HTTP backends) run inside this block."""
    token = _tenant.set(tenant)
    try:
        yield
    finally:
        _tenant.reset(token)


def current() -> Tenant:
    tenant = _tenant.get() or _process_tenant
    if tenant is None:
        raise ToolRefused("the tool has no tenant: the memory did not bind one")
    return tenant


Label = Annotated[
    str, Field(description="название, как его сказал бы человек (по-русски или по-английски)")
]
Basis = Annotated[
    str, Field(description="основание: откуда это известно, словами (например, фраза архитектора)")
]


class ListItem(BaseModel):
    value: Annotated[str, Field(description="сам элемент списка, например имя")]
    fields: Annotated[
        dict[str, str],
        Field(
            default_factory=dict,
            description="признаки элемента: название → значение (роль, город…)",
        ),
    ]


Table = Annotated[str | None, Field(description="таблица-список, если значение — в её строке")]
Row = Annotated[int | None, Field(description="номер строки таблицы-списка")]


def _in_tenant(write: Callable[..., shape_tools.WriteReport], **arguments: Any) -> dict[str, Any]:
    """Run a shape tool for the tenant's architect and run — never ones the model names."""
    tenant = current()
    return write(architect=tenant.architect, run=tenant.run, **arguments).as_dict()


def write_value(
    kind: Label,
    value: str,
    claim: Claim = "stated",
    basis: Basis = "",
    table: Table = None,
    row: Row = None,
) -> dict[str, Any]:
    return _in_tenant(
        shape_tools.write_value,
        kind=kind,
        value=value,
        claim=claim,
        basis=basis,
        table=table,
        row=row,
    )


def make_new_kind(
    kind: Label,
    value: str,
    claim: Claim = "stated",
    basis: Basis = "",
    table: Table = None,
    row: Row = None,
) -> dict[str, Any]:
    return _in_tenant(
        shape_tools.make_new_kind,
        kind=kind,
        value=value,
        claim=claim,
        basis=basis,
        table=table,
        row=row,
    )


def promote_to_list(
    kind: Label,
    items: list[ListItem],
    claim: Claim = "stated",
    basis: Basis = "",
) -> dict[str, Any]:
    return _in_tenant(
        shape_tools.promote_to_list,
        kind=kind,
        items=[{"value": i.value, "fields": dict(i.fields)} for i in items],
        claim=claim,
        basis=basis,
    )


def read_catalog() -> dict[str, Any]:
    tenant = current()
    return {"tables": selectors.catalog_summary(tenant.architect)}


def read_table(
    table: Annotated[
        str,
        Field(description="название таблицы-списка, или 'root' — одиночные значения архитектора"),
    ],
) -> dict[str, Any]:
    tenant = current()
    asked = _asked_scope(tenant)
    if table.strip().lower() == "root":
        kinds = list(
            ShapeEntry.objects.filter(architect=tenant.architect, kind="column", table=ROOT_TABLE)
        )
        values = selectors.root_values(tenant.architect, kinds)
        kept_values = selectors.in_scope_all(tenant.architect, values, asked)
        out: dict[str, Any] = {"table": "root", "values": kept_values}
        if asked:
            out["asked_scope"] = asked
            out["values_out_of_scope"] = len(values) - len(kept_values)
        return out
    entry = shape_tools.table_entry(tenant.architect, table)
    rows = selectors.table_rows(tenant.architect, entry)
    kept = list(
        selectors.in_scope_all(tenant.architect, {r["row"]: r for r in rows}, asked).values()
    )
    out = {"table": entry.label, "name": entry.table, "rows": kept}
    if asked:
        out["asked_scope"] = asked
        out["rows_out_of_scope"] = len(rows) - len(kept)
    return out


def _asked_scope(tenant: Tenant) -> list[dict[str, Any]]:
    """The scope of the request the tools serve (kept on its run from the start)."""
    if tenant.run is None:
        return []
    return list((tenant.run.params or {}).get("scope") or [])


def ask_graph(
    question: Annotated[str, Field(description="вопрос о связях, обычным текстом")],
) -> dict[str, Any]:
    tenant = current()
    # the graph answers by the request's scope, as level 3 does
    return _reached("ask_graph")(tenant.architect, question, _asked_scope(tenant))


def find_notes(
    words: Annotated[str, Field(description="слова или термин, которые должна говорить заметка")],
) -> dict[str, Any]:
    """The architect's notes that say these words (the full-text index, as level 1 reads it),
    best first, each with its id, its day and the run that recorded it."""
    tenant = current()
    hits = notes_search(
        architect=tenant.architect,
        terms=language.keywords(words),
        limit=10,
        scope=_asked_scope(tenant),
    )
    return {
        "notes": [
            {
                "note": str(h.note.pk),
                "text": h.note.text,
                "said_at": h.note.created_at.isoformat(),
                "run": str(h.note.run_id or ""),
                "coverage": round(h.coverage, 3),
            }
            for h in hits
        ]
    }


def keep_object(
    name: str,
    media_type: Annotated[str, Field(description="например text/markdown")],
    content: Annotated[str, Field(description="сам документ целиком")],
    summary: Annotated[
        str, Field(description="короткое саммари: что в документе и где подробности")
    ],
) -> dict[str, Any]:
    tenant = current()
    obj, _ = object_keep(
        architect=tenant.architect,
        name=name,
        media_type=media_type,
        content=content.encode("utf-8"),
        summary=summary,
        origin="answer",
        run=tenant.run,
        scope=_asked_scope(tenant),  # what it holds is true where the request asked
    )
    return {
        "object": str(obj.pk),
        "media_type": obj.media_type,
        "summary": obj.summary,
        "size": obj.size,
    }


def _evolving() -> Tenant:
    tenant = current()
    if tenant.run is None or tenant.run.verb != EVOLVE:
        raise ToolRefused("the candidate tools serve only the memory's own evolution runs")
    return tenant


def _measuring(reach: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """A candidate written through the evolution's own path, by the model, in the evolution run
    (``_evolving``) that its fate will judge."""
    writer = _evolving().run
    try:
        candidate = _reached(reach)(*args, author="model", writer=writer, **kwargs)
    except ValueError as error:  # SkillError: no such skill, a name refused, no body, no reason
        raise ToolRefused(str(error)) from error
    return {"skill": candidate.skill, "candidate": candidate.version, "status": "measuring"}


def write_candidate(
    skill: Annotated[str, Field(description="имя навыка, как в его папке (например use-tables)")],
    body: Annotated[str, Field(description="полный текст второй версии навыка, без front matter")],
    reason: Annotated[str, Field(description="какой промах действующей версии она исправляет")],
) -> dict[str, Any]:
    """Write the second version of a skill beside the active one. Only a candidate file: the
    active version and the instruction are out of this tool's reach."""
    _evolving()
    return _measuring("write_candidate", skill, body=body, reason=reason)


def propose_skill(
    name: Annotated[str, Field(description="имя нового навыка (латиница, дефисы), его папка")],
    beside: Annotated[
        str, Field(description="существующий навык, рядом с которым он будет читаться")
    ],
    description: Annotated[str, Field(description="когда его применять, одной фразой")],
    body: Annotated[str, Field(description="полный текст навыка, без front matter")],
    reason: Annotated[str, Field(description="какой промах он исправляет")],
) -> dict[str, Any]:
    """Propose a skill that does not exist yet: a candidate read in the calls of ``beside``,
    with no tools of its own; the name passes the memory's one name check."""
    _evolving()
    return _measuring(
        "propose_skill", name, beside=beside, description=description, body=body, reason=reason
    )


def propose_instruction(
    lines: Annotated[str, Field(description="новые строки инструкции, по строке на способность")],
    reason: Annotated[str, Field(description="какой промах они исправляют")],
) -> dict[str, Any]:
    """Propose lines added to the instruction: a candidate of the whole instruction, never the
    live one (nor the reference, which only staff set)."""
    _evolving()
    return _measuring("propose_instruction", lines, reason=reason)


@dataclass(frozen=True)
class AgentTool:
    name: str
    fn: Callable[..., dict[str, Any]]
    description: str
    writes: bool


TOOLS: tuple[AgentTool, ...] = (
    AgentTool(
        "write_value",
        write_value,
        "Поменять значение, для которого в памяти уже есть род (колонка корня или признака строки "
        "списка). Дёшево: одна строка, форма не растёт. Если рода нет — ошибка, тогда make_new_kind.",
        writes=True,
    ),
    AgentTool(
        "make_new_kind",
        make_new_kind,
        "Записать одиночное свойство, для которого рода ещё нет. Форма растёт на один род — это "
        "изменение схемы, поэтому для устойчивого свойства, а не для разовой реплики.",
        writes=True,
    ),
    AgentTool(
        "promote_to_list",
        promote_to_list,
        "Записать множество однородных вещей (друзья, команда) или дописать в существующий список. "
        "Первый раз создаёт таблицу и переносит туда прежнее одиночное значение; дальше дописывает.",
        writes=True,
    ),
    AgentTool(
        "read_catalog",
        read_catalog,
        "Увидеть, какие таблицы и роды уже есть у архитектора. Дёшево, ничего не меняет.",
        writes=False,
    ),
    AgentTool(
        "read_table",
        read_table,
        "Прочитать строки одной таблицы-списка или одиночные значения архитектора ('root'). "
        "Дёшево, ничего не меняет.",
        writes=False,
    ),
    AgentTool(
        "ask_graph",
        ask_graph,
        "Спросить граф знаний о связях между чем угодно. Без хода модели: граф отдаёт готовый контекст.",
        writes=False,
    ),
    AgentTool(
        "find_notes",
        find_notes,
        "Найти заметки архитектора, которые говорят эти слова: дословный текст, id, день, прогон. "
        "Дёшево, без хода модели, ничего не меняет.",
        writes=False,
    ),
    AgentTool(
        "keep_object",
        keep_object,
        "Сохранить документ, который ты составил как ответ (таблицу, отчёт), и получить его вечный "
        "идентификатор. Стоит места в хранилище объектов.",
        writes=True,
    ),
    AgentTool(
        "write_candidate",
        write_candidate,
        "Записать вторую версию навыка рядом с действующей: она пойдёт в теневую проверку на "
        "настоящих запросах и заменит действующую только по вердиктам снаружи и цене. Один коммит.",
        writes=True,
    ),
    AgentTool(
        "propose_skill",
        propose_skill,
        "Предложить навык, которого ещё нет: кандидат, который читается рядом с существующим "
        "навыком; он пойдёт в теневую проверку и станет навыком только по вердиктам и цене.",
        writes=True,
    ),
    AgentTool(
        "propose_instruction",
        propose_instruction,
        "Предложить новые строки инструкции: кандидат всей инструкции, теневая проверка на всех "
        "вызовах, замена только по вердиктам и цене.",
        writes=True,
    ),
)
BY_NAME = {tool.name: tool for tool in TOOLS}
WRITE_TOOLS = tuple(t.name for t in TOOLS if t.writes)
READ_TOOLS = ("read_catalog", "read_table", "ask_graph")
RESEARCH_TOOLS = (*READ_TOOLS, "find_notes")  # level 5 cites notes by what they say
# The model writing a candidate — a second version, a new skill, instruction lines — and nothing else.
EVOLVE_TOOLS = ("write_candidate", "propose_skill", "propose_instruction")
# What a write tool answers in a shadow run: the call is recorded (what the candidate would
# have written is its answer), nothing is written.
SHADOW_WRITE = {"written": False, "note": "теневой прогон: ничего не записано"}


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def _in_shadow(tenant: Tenant, tool: str) -> bool:
    """Does this write stay unwritten? In a shadow-channel run, yes — save a candidate tool in
    the memory's own evolution run (it writes only candidates, and that is its work), unless
    that run is itself a replay (a case's shadow, measuring evolve-skill's candidate)."""
    run = tenant.run
    if run is None or run.channel != SHADOW:
        return False
    return tool not in EVOLVE_TOOLS or ShadowCase.objects.filter(shadow=run).exists()


def _dry(tool: AgentTool) -> Callable[..., dict[str, Any]]:
    """The tool's signature (so its arguments are checked as for a real call), without its act:
    a shadow run (a candidate skill replaying a real request) writes nothing."""

    def dry(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return dict(SHADOW_WRITE)

    dry.__signature__ = inspect.signature(tool.fn)  # type: ignore[attr-defined]
    dry.__annotations__ = dict(tool.fn.__annotations__)
    return dry


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call one tool in the current tenant and record the call; refusals are recorded too."""
    tool = BY_NAME.get(name)
    if tool is None:
        raise ToolRefused(f"there is no tool {name!r}")
    tenant = current()
    started = time.perf_counter()
    record = None
    if tenant.run is not None:
        record = ToolCall(
            run=tenant.run, architect=tenant.architect, tool=name, arguments=_jsonable(arguments)
        )
    try:
        # The same validation MCP applies, so in-process calls (HTTP backends) get it too.
        if tool.writes and _in_shadow(tenant, name):
            result = validate_call(_dry(tool))(**arguments)
        else:
            result = validate_call(tool.fn)(**arguments)
    except (MemoryServiceError, ToolRefused, ValidationError) as error:
        message = error.message if isinstance(error, MemoryServiceError) else str(error)
        if record is not None:
            record.error = message
            record.seconds = round(time.perf_counter() - started, 4)
            record.save()
        raise ToolRefused(message) from error
    if record is not None:
        record.result = result
        record.seconds = round(time.perf_counter() - started, 4)
        record.save()
    return result
