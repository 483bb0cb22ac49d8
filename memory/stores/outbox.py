"""Writes to the vectors and the graph go through the outbox (``OutboxItem``): recorded with the
fact they come from, delivered at once when the store answers, replayed with backoff when not.

Delivery is idempotent (stable vector ids; the graph merges what it already has), so a replay
after a crash between delivery and bookkeeping does no harm. With the embedded engines only the
process that owns them delivers; another process asks the owner through the internal door.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memory.errors import MemoryServiceError
from memory.models import Architect, OutboxItem, Run
from memory.stores import door
from memory.stores.graph import Chunk, Entity, Relation, graph
from memory.stores.vectors import VectorItem, vectors


@dataclass
class Drained:
    delivered: list[int] = field(default_factory=list)
    queued: list[int] = field(default_factory=list)
    errors: dict[int, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"delivered": self.delivered, "queued": self.queued, "errors": self.errors}


def enqueue(
    *, architect: Architect, store: str, op: str, payload: dict[str, Any], run: Run | None
) -> OutboxItem:
    return OutboxItem.objects.create(
        architect=architect, store=store, op=op, payload=payload, run=run
    )


def vectors_add(
    *, architect: Architect, kind: str, items: list[VectorItem], run: Run | None
) -> OutboxItem:
    payload = {
        "kind": kind,
        "items": [{"id": i.id, "text": i.text, "payload": i.payload} for i in items],
    }
    return enqueue(architect=architect, store="vectors", op="add", payload=payload, run=run)


def graph_insert(
    *,
    architect: Architect,
    chunks: list[Chunk],
    entities: list[Entity],
    relations: list[Relation],
    run: Run | None,
) -> OutboxItem:
    payload = {
        "chunks": [c.__dict__ for c in chunks],
        "entities": [e.__dict__ for e in entities],
        "relations": [r.__dict__ for r in relations],
    }
    return enqueue(architect=architect, store="graph", op="insert", payload=payload, run=run)


def _deliver(item: OutboxItem) -> None:
    payload = item.payload
    if item.store == "vectors" and item.op == "add":
        vectors().add(
            kind=payload["kind"],
            architect_id=item.architect_id,
            items=[VectorItem(**i) for i in payload["items"]],
        )
    elif item.store == "graph" and item.op == "insert":
        graph().insert(
            architect_id=item.architect_id,
            chunks=[Chunk(**c) for c in payload["chunks"]],
            entities=[Entity(**e) for e in payload["entities"]],
            relations=[Relation(**r) for r in payload["relations"]],
        )
    else:
        raise MemoryServiceError(
            f"unknown outbox operation {item.store}.{item.op}", code="outbox_unknown_op"
        )


def backoff(attempts: int) -> timedelta:
    return timedelta(seconds=min(settings.OUTBOX_MAX_BACKOFF, 2 ** min(attempts, 12)))


def _owner_here() -> bool:
    """Only the owner of embedded stores delivers to them; server engines take anyone."""
    from memory.stores import embedded

    return not (embedded() and settings.MEMORY_STORE_ACCESS == "door")


def drain(*, ids: Iterable[int] | None = None, force: bool = False) -> Drained:
    """Deliver queued items (the given ones, or every due one). Failures stay queued with backoff."""
    if not _owner_here():
        return Drained(
            **door.client().drain(ids=list(ids) if ids is not None else None, force=force)
        )
    result = Drained()
    query = OutboxItem.objects.filter(status="queued")
    if ids is not None:
        query = query.filter(pk__in=list(ids))
    if not force and ids is None:
        query = query.filter(next_attempt_at__lte=timezone.now())
    for pk in list(query.order_by("pk").values_list("pk", flat=True)):
        with transaction.atomic():
            locked = OutboxItem.objects.select_for_update(skip_locked=True).filter(
                pk=pk, status="queued"
            )
            item = locked.first()
            if item is None:
                continue  # another drainer has it
            try:
                _deliver(item)
            except MemoryServiceError as error:
                # Kept queued either way — nothing is dropped. A permanent refusal (e.g. no
                # server configured for this architect) waits the longest before the next try.
                item.attempts += 1
                item.last_error = error.message[:2000]
                wait = backoff(item.attempts) if error.retryable else backoff(64)
                item.next_attempt_at = timezone.now() + wait
                item.save(update_fields=["attempts", "last_error", "next_attempt_at"])
                result.queued.append(pk)
                result.errors[pk] = error.message
                continue
            item.status = "done"
            item.done_at = timezone.now()
            item.attempts += 1
            item.save(update_fields=["status", "done_at", "attempts"])
            result.delivered.append(pk)
    return result


def schedule_replay(delay: float) -> None:
    """Ask the worker to replay after ``delay`` seconds (once the current transaction commits)."""
    from memory.tasks import outbox_replay

    transaction.on_commit(lambda: outbox_replay.apply_async(countdown=max(1.0, delay)))
