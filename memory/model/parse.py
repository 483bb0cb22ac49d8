"""The phrase parse: one model call with NO tools (it must return clean JSON): the things a
phrase names and how they are related. The graph is filled from it when a model is configured."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from memory.agent.instruction import instruction
from memory.model.base import ModelBackend, ModelResult, ToolGrant
from memory.model.structured import ask_json

PHRASE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["entities", "relations"],
    "properties": {
        "entities": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "type"],
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 200},
                    "type": {"type": "string", "minLength": 1, "maxLength": 50},
                },
            },
        },
        "relations": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["source", "relation", "target"],
                "properties": {
                    "source": {"type": "string", "minLength": 1},
                    "relation": {"type": "string", "minLength": 1},
                    "target": {"type": "string", "minLength": 1},
                },
            },
        },
    },
}

_TASK = (
    "Задача — разбор фразы. Назови вещи, которые фраза упоминает (люди, места, организации, "
    "события, предметы; «архитектор» — тот, кто говорит), и связи между ними. Ничего не выдумывай."
)


@dataclass(frozen=True)
class Phrase:
    entities: list[dict[str, str]]
    relations: list[dict[str, str]]


def phrase_parse(
    backend: ModelBackend, text: str, *, architect_id: int, run_id: str = ""
) -> tuple[Phrase, ModelResult]:
    """``architect_id`` owns the call's thread; the tool list is empty — the parse gets no tools."""
    value, result = ask_json(
        backend,
        prompt=f"Фраза: «{text}»",
        system=f"{instruction()}\n\n---\n\n{_TASK}",
        schema=PHRASE_SCHEMA,
        tools=ToolGrant(architect_id=architect_id, run_id=run_id, tools=()),
        thread=None,
        timeout=settings.MODEL_PARSE_TIMEOUT,
    )
    return Phrase(entities=value["entities"], relations=value["relations"]), result
