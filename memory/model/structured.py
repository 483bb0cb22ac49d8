"""Asking a model for JSON: validated against a schema, one repair attempt, then a named failure.

The repair continues the same thread (a resumed call reads the first reply from cache instead of
paying for it again) and names what was wrong with the first answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import jsonschema

from memory.model.base import ModelBackend, ModelBadOutput, ModelError, ModelResult, ToolGrant

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


def _extract(text: str) -> Any:
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    return json.loads(body)


def _problem(text: str, schema: dict[str, Any]) -> tuple[Any, str | None]:
    try:
        value = _extract(text)
    except ValueError as error:
        return None, f"not JSON ({error})"
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as error:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return None, f"does not match the schema at {where}: {error.message}"
    return value, None


def ask_json(
    backend: ModelBackend,
    *,
    prompt: str,
    system: str,
    schema: dict[str, Any],
    tools: ToolGrant | None,
    thread: str | None,
    timeout: float,
) -> tuple[Any, ModelResult]:
    request = (
        f"{prompt}\n\nОтветь только JSON-объектом по этой схеме, без пояснений:\n"
        f"{json.dumps(schema, ensure_ascii=False)}"
    )
    first = backend.run(prompt=request, system=system, tools=tools, thread=thread, timeout=timeout)
    value, problem = _problem(first.text, schema)
    if problem is None:
        return value, first
    try:
        repair = backend.run(
            prompt=f"Твой ответ {problem}. Повтори ответ: только JSON по схеме.",
            system=system,
            tools=replace(tools, tools=()) if tools else None,  # the repair only re-forms it
            thread=first.thread,
            timeout=timeout,
        )
    except ModelError as error:
        raise error.spent(first) from error  # the first answer was paid for all the same
    total = first.add(repair)
    value, second_problem = _problem(repair.text, schema)
    if second_problem is None:
        return value, total
    raise ModelBadOutput(
        f"the model answered out of form twice: first {problem}; after repair {second_problem}",
        details={"thread": total.thread},
    ).spent(total)
