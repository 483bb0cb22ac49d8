"""Idempotent remember: the ``Idempotency-Key`` header, with the IETF draft's semantics
(draft-ietf-httpapi-idempotency-key-header): the same key with the same body returns the first
answer; the same key with another body is refused (422); a key whose first request is still
being served is refused as a conflict (409, retryable). Keys belong to one architect and are
forgotten after IDEMPOTENCY_TTL_HOURS (PASSPORT.md §14.2).

The record is written in the same transaction as the note, so whatever happens after the commit,
a retry finds it and never stores the fact twice. A record whose first request died before
answering (its run closed by the sweep) answers with what was stored, rebuilt from the facts.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from memory.errors import MemoryServiceError
from memory.i18n import Text
from memory.models import Architect, IdempotencyRecord, Note, OutboxItem, Run
from memory.services.cycle import frame

HEADER = "Idempotency-Key"
KEY_PATTERN = r"^[\x21-\x7e]{1,255}$"  # printable ASCII, no spaces (the schema says so too)
_KEY = re.compile(KEY_PATTERN)

_BAD_KEY = Text(
    ru="заголовок Idempotency-Key: от 1 до 255 печатных ASCII-символов без пробелов",
    en="the Idempotency-Key header: 1 to 255 printable ASCII characters, no spaces",
)
_OTHER_BODY = Text(
    ru="ключ идемпотентности {key} уже использован с другим телом запроса; для новой записи "
    "нужен новый ключ",
    en="the idempotency key {key} was already used with another request body; a new write "
    "needs a new key",
)
_IN_PROGRESS = Text(
    ru="запрос с ключом идемпотентности {key} ещё выполняется; повторите позже",
    en="the request with idempotency key {key} is still being served; retry later",
)
_RECOVERED = Text(
    ru="процесс, обслуживавший эту запись, остановился до ответа; заметка сохранена, ответ "
    "восстановлен по фактам прогона",
    en="the process serving this write stopped before answering; the note is kept and the "
    "answer is rebuilt from the run's facts",
)


def check_key(key: str, lang: str) -> str:
    if not _KEY.match(key):
        raise MemoryServiceError(_BAD_KEY(lang), code="bad_idempotency_key")
    return key


def fingerprint(data: Any) -> str:
    canonical = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def replay(
    *, architect: Architect, key: str, data: Any, lang: str
) -> tuple[dict[str, Any], int] | None:
    """The first answer for this key, or None when the key is new."""
    record = IdempotencyRecord.objects.filter(architect=architect, key=key).first()
    if record is None:
        return None
    if record.fingerprint != fingerprint(data):
        raise MemoryServiceError(
            _OTHER_BODY(lang, key=key), code="idempotency_key_reused", status=422
        )
    if record.answer is not None:
        return record.answer, record.status
    run = record.run
    if run is None or run.status == "running":
        raise MemoryServiceError(
            _IN_PROGRESS(lang, key=key), code="idempotency_in_progress", status=409, retryable=True
        )
    return _rebuilt(run, lang), 200


def reserve(*, architect: Architect, key: str, data: Any, run: Run, lang: str) -> IdempotencyRecord:
    """Inside the note's transaction. A concurrent twin that won the race makes this one a 409,
    and its transaction (the note included) rolls back."""
    try:
        with transaction.atomic():
            return IdempotencyRecord.objects.create(
                architect=architect, key=key, fingerprint=fingerprint(data), run=run
            )
    except IntegrityError as error:
        raise MemoryServiceError(
            _IN_PROGRESS(lang, key=key), code="idempotency_in_progress", status=409, retryable=True
        ) from error


def settle(record: IdempotencyRecord, answer: dict[str, Any], status: int = 200) -> None:
    IdempotencyRecord.objects.filter(pk=record.pk).update(answer=answer, status=status)


def forget_expired() -> int:
    before = timezone.now() - timedelta(hours=settings.IDEMPOTENCY_TTL_HOURS)
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=before).delete()
    return deleted


def _rebuilt(run: Run, lang: str) -> dict[str, Any]:
    """A remember answer from the facts of a run whose process died before answering."""
    note = Note.objects.filter(run=run).order_by("created_at").first()
    stores: dict[str, dict[str, Any]] = {}
    for item in OutboxItem.objects.filter(run=run):
        entry = stores.setdefault(item.store, {"status": "written", "items": 0})
        entry["items"] += 1
        state = {"done": "written", "queued": "queued", "dead": "failed"}[item.status]
        if state != "written" and entry["status"] != "failed":
            entry["status"] = state
            if item.last_error:
                entry["note"] = item.last_error
    return {
        **frame("remember", run),
        "stored": {"note": str(note.pk)} if note else {},
        "tables": list(run.report or []),
        "tables_created": [],
        "new_tables_filled": [],
        "model": {"called": False, "status": "failed", "note": _RECOVERED(lang)},
        "stores": stores,
        "params": dict(run.params or {}),
        "seconds": run.seconds,
    }
