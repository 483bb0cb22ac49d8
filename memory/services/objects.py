"""Objects: keep a whole thing under an eternal id and make it findable by its card."""

from __future__ import annotations

import hashlib
import re

from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.db import transaction

from memory.models import Architect, MemoryObject, OutboxItem, Run
from memory.stores import outbox
from memory.stores.objects import card_text
from memory.stores.vectors import VectorItem

TEXT_TYPES = (
    "text/",
    "application/json",
    "application/xml",
    "application/xhtml+xml",
    "application/csv",
)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:120] or "object"


def is_text(media_type: str) -> bool:
    return media_type.startswith(TEXT_TYPES)


def object_keep(
    *,
    architect: Architect,
    name: str,
    media_type: str,
    content: bytes,
    description: str = "",
    summary: str = "",
    origin: str = "upload",
    run: Run | None = None,
) -> tuple[MemoryObject, OutboxItem]:
    """Store the bytes, record the object, queue its card for the ``objects`` vectors."""
    obj = MemoryObject(
        architect=architect,
        name=name,
        media_type=media_type,
        description=description,
        summary=summary,
        size=len(content),
        sha256=hashlib.sha256(content).hexdigest(),
        origin=origin,
        run=run,
    )
    obj.storage_key = storages["objects"].save(
        f"{architect.pk}/{obj.pk}/{_safe(name)}", ContentFile(content)
    )
    text = content.decode("utf-8", errors="replace") if is_text(media_type) else None
    card = card_text(name=name, description=description or summary, text=text)
    with transaction.atomic():
        obj.save()
        item = outbox.vectors_add(
            architect=architect,
            kind="objects",
            items=[
                VectorItem(
                    id=str(obj.pk),
                    text=card,
                    payload={"object": str(obj.pk), "name": name, "media_type": media_type},
                )
            ],
            run=run,
        )
    return obj, item


def object_read(*, architect: Architect, object_id: str) -> tuple[MemoryObject, bytes]:
    obj = MemoryObject.objects.get(pk=object_id, architect=architect)
    with storages["objects"].open(obj.storage_key, "rb") as f:
        return obj, f.read()
