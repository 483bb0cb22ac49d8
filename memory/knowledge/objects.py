"""Objects: keep a whole thing under an eternal id and make it findable by its card."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core import signing
from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.db import transaction

from memory import language
from memory import scope as scopes
from memory.errors import MemoryServiceError
from memory.i18n import Text
from memory.models import Architect, MemoryObject, ObjectKeyword, OutboxItem, Run
from memory.relevance import TermWeights, keywords_held, ranked_by_terms
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
    scope: Sequence[dict[str, Any]] = (),
) -> tuple[MemoryObject, OutboxItem]:
    """Store the bytes, record the object with its scope, queue its card for the ``objects``
    vectors (the scope in its payload, so level 4 reads it as it reads a note's)."""
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
        scope=list(scope),
    )
    obj.storage_key = storages["objects"].save(
        f"{architect.pk}/{obj.pk}/{_safe(name)}", ContentFile(content)
    )
    text = content.decode("utf-8", errors="replace") if is_text(media_type) else None
    card = card_text(name=name, description=description or summary, text=text)
    terms = language.keywords(f"{name.rsplit('.', 1)[0]} {description or summary}")
    with transaction.atomic():
        obj.save()
        ObjectKeyword.objects.bulk_create(
            [ObjectKeyword(architect=architect, object=obj, lemma=lemma) for lemma in terms]
        )
        item = outbox.vectors_add(
            architect=architect,
            kind="objects",
            items=[
                VectorItem(
                    id=str(obj.pk),
                    text=card,
                    payload={
                        "object": str(obj.pk),
                        "name": name,
                        "media_type": media_type,
                        "scope": obj.scope,
                        "places": scopes.places(obj.scope),
                    },
                )
            ],
            run=run,
        )
    return obj, item


def object_read(*, architect: Architect, object_id: str) -> tuple[MemoryObject, bytes]:
    obj = MemoryObject.objects.get(pk=object_id, architect=architect)
    with storages["objects"].open(obj.storage_key, "rb") as f:
        return obj, f.read()


# --- the link a memory key reads an object by ---------------------------------------------------

_LINK_SALT = "memory.objects.link"
_NO_OBJECT = Text(
    ru="такого объекта у этого архитектора нет, или ссылка на него неверна",
    en="this architect has no such object, or the link to it is wrong",
)
_EXPIRED = Text(
    ru="ссылка на объект истекла (OBJECT_LINK_SECONDS): свежая приходит с каждым ответом recall",
    en="the object's link has expired (OBJECT_LINK_SECONDS): every recall answer gives a fresh one",
)


class ObjectNotFound(MemoryServiceError):
    code = "object_not_found"
    status = 404


class LinkExpired(MemoryServiceError):
    code = "link_expired"
    status = 410


def object_link(obj: MemoryObject) -> str:
    """``/api/v1/objects/<id>?token=…``: signed for this object and its architect, valid for
    OBJECT_LINK_SECONDS. The link alone reads nothing: the memory key must be the architect's."""
    token = signing.TimestampSigner(salt=_LINK_SALT).sign(f"{obj.pk}.{obj.architect_id}")
    return f"/api/v1/objects/{obj.pk}?token={token}"


def object_by_link(
    *, architect: Architect, object_id: str, token: str, lang: str
) -> tuple[MemoryObject, bytes]:
    """The object a link names, for the key's architect: another architect's object, a token
    for another object or tampered with, and an unknown id are all the same 404 (nothing says
    the object exists); an expired link is 410."""
    signer = signing.TimestampSigner(salt=_LINK_SALT)
    try:
        signed = signer.unsign(token, max_age=settings.OBJECT_LINK_SECONDS)
    except signing.SignatureExpired as error:
        raise LinkExpired(_EXPIRED(lang)) from error
    except signing.BadSignature as error:
        raise ObjectNotFound(_NO_OBJECT(lang)) from error
    if signed != f"{object_id}.{architect.pk}":
        raise ObjectNotFound(_NO_OBJECT(lang))
    try:
        return object_read(architect=architect, object_id=object_id)
    except MemoryObject.DoesNotExist as error:
        raise ObjectNotFound(_NO_OBJECT(lang)) from error


# Text objects up to this many bytes come back inside a recall answer; larger or binary ones
# are named by their path through the internal door (services) — PASSPORT.md «Объекты».
INLINE_BYTES = 32_768


def door_path(obj: MemoryObject) -> str:
    return f"/internal/v1/objects/{obj.pk}"


def object_answer(obj: MemoryObject) -> dict[str, Any]:
    """An object as a recall answer gives it (PASSPORT.md §13, fork 3). Always: its id, name,
    media type, size, summary, and ``url`` — a signed link that expires, for a memory key of the
    same architect to read it whole. By occasion: ``content`` (a text up to INLINE_BYTES, inline)
    or ``path`` (anything else, through the internal door, for services with the machine secret)."""
    answer: dict[str, Any] = {
        "id": str(obj.pk),
        "name": obj.name,
        "media_type": obj.media_type,
        "size": obj.size,
        "summary": obj.summary or obj.description or obj.name,
        "url": object_link(obj),
    }
    if is_text(obj.media_type) and obj.size <= INLINE_BYTES:
        _, content = object_read(architect=obj.architect, object_id=str(obj.pk))
        answer["content"] = content.decode("utf-8", errors="replace")
    else:
        answer["path"] = door_path(obj)
    return answer


@dataclass
class ObjectHit:
    object: MemoryObject
    matched: list[str]
    coverage: float


def objects_search(
    *,
    architect: Architect,
    terms: Sequence[str],
    weights: TermWeights,
    limit: int = 10,
    held: dict[Any, set[str]] | None = None,
    scope: Sequence[dict[str, Any]] = (),
) -> list[ObjectHit]:
    """Objects whose title or description holds the question's terms and whose scope fits the
    question's (``memory.scope.fits``), best covered first.
    ``held``: the asked terms each object holds, when already read (level 1's one look)."""
    asked = list(dict.fromkeys(terms))
    if held is None:
        held = keywords_held(ObjectKeyword, "object_id", architect=architect, asked=asked)
    if not held:
        return []
    found = MemoryObject.objects.filter(architect=architect, pk__in=list(held))
    ranked = ranked_by_terms(
        found, asked=asked, held=held, weights=weights, scope=scope, limit=limit
    )
    return [ObjectHit(object=o, matched=m, coverage=c) for o, m, c in ranked]
