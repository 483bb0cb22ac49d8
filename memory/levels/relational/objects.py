"""Level 1's objects: one named by its id in the question, or found by its card's words."""

from __future__ import annotations

import re
from typing import Any

from memory import scope as scopes
from memory.i18n import Text
from memory.knowledge import objects as objects_service
from memory.ladder import Kind, Outcome, ReportEntry
from memory.levels.context import RecallContext
from memory.models import MemoryObject

# --- objects -----------------------------------------------------------------------------------

_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
_OBJECT = Text(
    ru="Объект «{name}» ({media_type}, {size} байт): {summary}",
    en="Object «{name}» ({media_type}, {size} bytes): {summary}",
)
_OBJECT_PATH = Text(
    ru="Содержимое целиком: {url} (с ключом памяти этого архитектора)",
    en="The content whole: {url} (with a memory key of this architect)",
)
_OBJECT_NAMED = Text(
    ru="вопрос называет объект по id", en="the question names the object by its id"
)


def _object_outcome(
    obj: MemoryObject,
    report: list[ReportEntry],
    trace: list[dict[str, Any]],
    ctx: RecallContext,
    kind: Kind,
) -> Outcome:
    card = objects_service.object_answer(obj)
    # Bound elsewhere or unbound where asked: the answer says what it depends on (memory.scope).
    missing = scopes.scope_missing(
        [obj.scope], ctx.scope, lang=ctx.lang, unknown=scopes.unknown(obj.scope, ctx.scope)
    )
    lines = [m["why"] for m in missing] + [
        _OBJECT(ctx.lang, **{k: card[k] for k in ("name", "media_type", "size", "summary")})
    ]
    if "content" in card:
        lines.append(card["content"])
    else:
        lines.append(_OBJECT_PATH(ctx.lang, url=card["url"]))
    return Outcome(
        found=True,
        kind="parameter_dependent" if missing else kind,
        missing=missing,
        form="object",
        text="\n".join(lines),
        object=card,
        data={"objects": [card]},
        report=report,
        trace=trace,
    )


def _named_object(ctx: RecallContext) -> MemoryObject | None:
    ids = _UUID.findall(ctx.text)
    if not ids:
        return None
    return MemoryObject.objects.filter(architect=ctx.architect, pk__in=ids).first()


def _object_item(hit: objects_service.ObjectHit) -> dict[str, Any]:
    return {
        "id": f"objects:{hit.object.pk}",
        "object": str(hit.object.pk),
        "text": hit.object.name,
        "source": "objects",
        "level": 1,
        "matched": hit.matched,
        "coverage": round(hit.coverage, 3),
    }
