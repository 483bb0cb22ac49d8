"""Writes to the vectors and the graph go through the outbox (``OutboxItem``): recorded in the same
transaction as the fact they come from, delivered at once when the store answers, replayed with
backoff when not (PASSPORT.md §14.1).

Every delivery error is classified: a *retryable* one (the store is down, slow, locked) keeps the
item ``queued`` and backs off with no retry cap; a *permanent* one (the store refuses this item
for good) puts it aside as ``dead`` with the reason. Either way the drain goes on to the next item:
one bad item never blocks another, nor another tenant.

Delivery runs outside any database transaction: an item is leased (``claimed_until``) in a short
transaction, delivered, then marked in another. Delivery is idempotent (stable vector ids; the
graph merges what it already has), so a lease that expires after a crash does no harm. With the
embedded engines only the process that holds them (the holder) delivers; another process asks the holder
through the internal door.

The in-process graph may hold an insert in memory (findable, not yet on disk: it saves by cost,
``memory.stores.graph``): such an item is ``held`` until the graph says it is saved, then
``done``. A holder that starts puts the held items it finds back in the queue — the process
that held them is gone with its memory — and they are delivered again.
"""

from __future__ import annotations

import logging
import random
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connections, transaction
from django.db.models import F, Q
from django.utils import timezone

from memory.celery import enqueue as enqueue_job
from memory.errors import MemoryServiceError
from memory.models import Architect, OutboxItem, Run
from memory.stores import door, embedded
from memory.stores.graph import Chunk, Entity, Relation, graph
from memory.stores.vectors import VectorItem, vectors

log = logging.getLogger(__name__)

REPLAY_TASK = "memory.outbox_replay"


@dataclass
class Drained:
    delivered: list[int] = field(default_factory=list)
    queued: list[int] = field(default_factory=list)
    dead: list[int] = field(default_factory=list)
    errors: dict[int, str] = field(default_factory=dict)
    held: list[int] = field(default_factory=list)  # delivered, in memory, saved later

    def as_dict(self) -> dict[str, Any]:
        return {
            "delivered": self.delivered,
            "queued": self.queued,
            "dead": self.dead,
            "errors": {str(k): v for k, v in self.errors.items()},
            "held": self.held,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Drained:
        return cls(
            delivered=list(data.get("delivered", [])),
            queued=list(data.get("queued", [])),
            dead=list(data.get("dead", [])),
            errors={int(k): v for k, v in (data.get("errors") or {}).items()},
            held=list(data.get("held", [])),
        )


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


def graph_note(*, note: Any, run: Run | None) -> OutboxItem:
    """The note's things, found at delivery (the offline NER runs behind the answer, not in it),
    inserted into the graph linked to the note."""
    return enqueue(
        architect=note.architect, store="graph", op="note", payload={"note": str(note.pk)}, run=run
    )


class PermanentError(MemoryServiceError):
    """This item can never be delivered as it is (a malformed payload, an unknown operation)."""

    code = "outbox_permanent"
    retryable = False


def _vector_items(item: OutboxItem) -> list[VectorItem]:
    try:
        return [VectorItem(**i) for i in item.payload["items"]]
    except (KeyError, TypeError) as error:
        raise PermanentError(f"malformed outbox payload: {error!r}") from error


# What the layers above define (a note's graph item needs the NER and the note's words) and the
# outbox delivers: a graph op → its insert from the payload, or a whole (store, op) delivery.
# Both are filled at start-up (``memory.apps`` imports ``memory.knowledge.fill``), so this adapter
# imports nothing above it.
GRAPH_PARTS: dict[str, Callable[[dict[str, Any]], dict[str, list[Any]] | None]] = {}
HANDLERS: dict[tuple[str, str], Callable[[OutboxItem], None]] = {}


def _graph_parts(item: OutboxItem) -> dict[str, list[Any]] | None:
    """What one graph item inserts (a note's things are found now, by the NER, if not yet)."""
    payload = item.payload
    try:
        if item.op in GRAPH_PARTS:
            return GRAPH_PARTS[item.op](payload)
        if item.op == "insert":
            return {
                "chunks": [Chunk(**c) for c in payload["chunks"]],
                "entities": [Entity(**e) for e in payload["entities"]],
                "relations": [Relation(**r) for r in payload["relations"]],
            }
    except (KeyError, TypeError) as error:
        raise PermanentError(f"malformed outbox payload: {error!r}") from error
    raise PermanentError(f"unknown outbox operation {item.store}.{item.op}")


def _deliver(item: OutboxItem) -> bool:
    """Deliver one item; False when the store holds it in memory (saved later)."""
    payload = item.payload
    try:
        if (item.store, item.op) in HANDLERS:
            HANDLERS[(item.store, item.op)](item)
        elif item.store == "vectors" and item.op == "add":
            batch = _vector_items(item)
            vectors().add(kind=payload["kind"], architect_id=item.architect_id, items=batch)
        elif item.store == "graph":
            parts = _graph_parts(item)
            if parts is not None:
                return graph().insert(architect_id=item.architect_id, **parts)
        else:
            raise PermanentError(f"unknown outbox operation {item.store}.{item.op}")
    except (KeyError, TypeError) as error:
        raise PermanentError(f"malformed outbox payload: {error!r}") from error
    return True


# Transport and resource failures: the store may answer later.
_RETRYABLE = (ConnectionError, TimeoutError, OSError, DatabaseError)


def classify(error: BaseException) -> tuple[bool, str]:
    """(retryable, reason) for a delivery error. Unknown errors are permanent: retrying the same
    payload against the same code would fail the same way, and a dead item is visible and can be
    requeued by staff once the cause is fixed, while a queued one would retry forever."""
    if isinstance(error, MemoryServiceError):
        return error.retryable, f"{error.code}: {error.message}"
    if isinstance(error, _RETRYABLE):
        return True, f"{type(error).__name__}: {error}"
    frame = traceback.extract_tb(error.__traceback__)[-1:] if error.__traceback__ else []
    where = f" at {frame[0].filename.rsplit('/', 1)[-1]}:{frame[0].lineno}" if frame else ""
    return False, f"{type(error).__name__}: {error}{where}"


def backoff(attempts: int) -> timedelta:
    """Exponential with jitter, capped in length (not in count): retries go on for ever."""
    base = min(settings.OUTBOX_MAX_BACKOFF, 2 ** min(attempts, 20))
    return timedelta(seconds=base * random.uniform(0.75, 1.0))


def lease() -> timedelta:
    return timedelta(seconds=settings.OUTBOX_LEASE_SECONDS)


# Set when this process is asked to stop (gunicorn's worker, the Celery worker): the rounds in
# flight end at the next batch and give back what they claimed, which the next start delivers
# (nothing is lost, it was never settled). A round runs GRAPH_ROUND_SECONDS at most, but four
# replays in flight at once each ran 12-18 s, and the stop waited for every one of them.
_stopping = threading.Event()


def _spent(budget: float) -> bool:
    """A round ends when its time is spent or when this process stops."""
    return _stopping.is_set() or time.monotonic() > budget


def stop_rounds() -> None:
    """This process is stopping: background rounds end at the next batch (the items a request
    delivers itself, and the save of what the graph holds, still happen)."""
    _stopping.set()


def _holder_here() -> bool:
    """Only the holder of embedded stores delivers to them; server engines take anyone."""
    return not (embedded() and settings.MEMORY_STORE_ACCESS == "door")


def _claim(pks: list[int], *, force: bool) -> list[OutboxItem]:
    """Lease the queued ones of these items to this drainer, in one short transaction, in the
    order given. The lease's end — to the microsecond, with a random part — is also this
    claim's mark: the items leased until exactly then are the ones this drainer took (another
    drainer's claim of the same moment would have to draw the same microsecond)."""
    if not pks:
        return []
    now = timezone.now()
    until = now + lease() + timedelta(microseconds=random.randrange(1_000_000))
    free = Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)
    due = Q() if force else Q(next_attempt_at__lte=now)
    with transaction.atomic():
        OutboxItem.objects.filter(free, due, pk__in=pks, status="queued").update(
            claimed_until=until
        )
    mine = {i.pk: i for i in OutboxItem.objects.filter(pk__in=pks, claimed_until=until)}
    return [mine[pk] for pk in pks if pk in mine]  # the others: another drainer's, or not queued


def _settle_failed(item: OutboxItem, error: BaseException, result: Drained) -> None:
    """Record one item's failed delivery: queued again with backoff, or dead."""
    now = timezone.now()
    item.attempts += 1
    item.claimed_until = None
    retryable, reason = classify(error)
    item.last_error = reason[:4000]
    result.errors[item.pk] = reason
    if retryable:
        item.next_attempt_at = now + backoff(item.attempts)
        result.queued.append(item.pk)
    else:
        item.status = "dead"
        item.done_at = now
        result.dead.append(item.pk)
        log.error("outbox item %s is dead: %s", item.pk, reason)
    with transaction.atomic():
        OutboxItem.objects.filter(pk=item.pk).update(
            status=item.status,
            attempts=item.attempts,
            claimed_until=None,
            next_attempt_at=item.next_attempt_at,
            last_error=item.last_error,
            done_at=item.done_at,
        )


def drain(*, ids: Iterable[int] | None = None, force: bool = False, limit: int = 500) -> Drained:
    """Deliver queued items (the given ones, or every due one, oldest first).

    Never raises for one item's failure: each is settled on its own as delivered, queued with
    backoff, or dead. ``force`` ignores the backoff (the request that wrote the items)."""
    if not _holder_here():
        data = door.client().drain(ids=list(ids) if ids is not None else None, force=force)
        return Drained.from_dict(data)
    _recover_held_once()
    result = Drained()
    vector_lane, graph_lane = _lanes(_claimed(ids, force, limit))
    if ids is not None:  # the request's own items, all of them, in order
        _run_lane([*vector_lane, *graph_lane], None, result)
        return result
    # The graph's inserts run in a lane of their own (two cores embed at once,
    # EMBEDDER_INSTANCES) for up to GRAPH_ROUND_SECONDS; meanwhile this thread delivers the
    # vectors of what is told, round after round of OUTBOX_ROUND_SECONDS, so a note is
    # findable by meaning (level 4) without waiting behind the graph. Not inside a transaction
    # of the caller's: another thread's connection would not see what it has not committed.
    if graph_lane and not transaction.get_connection().in_atomic_block:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="outbox-graph") as lane:
            graph_done = lane.submit(_own_connection, _graph_lane, graph_lane, force, result)
            _run_lane(vector_lane, time.monotonic() + settings.OUTBOX_ROUND_SECONDS, result)
            while not graph_done.done():
                more = (
                    []
                    if _stopping.is_set()
                    else _lanes(_claimed(None, force, limit, graph=False))[0]
                )
                if more:
                    _run_lane(more, time.monotonic() + settings.OUTBOX_ROUND_SECONDS, result)
                else:
                    wait([graph_done], timeout=0.05)
            graph_done.result()
    else:
        budget = time.monotonic() + settings.OUTBOX_ROUND_SECONDS
        _run_lane([*vector_lane, *graph_lane], budget, result)
    if not OutboxItem.objects.filter(store="graph", status="queued").exists():
        save_held(older_than=settings.GRAPH_SAVE_SECONDS)
    return result


# --- items the graph holds in memory --------------------------------------------------------

# A graph insert and the marking of its items are one step: a save marks done only items whose
# insert it covers.
_graph_writing = threading.RLock()
_recovered = False


def _saved(architect_id: int) -> int:
    """The architect's graph is saved: whatever it held is done. Returns how many."""
    return OutboxItem.objects.filter(
        architect_id=architect_id, store="graph", status="held"
    ).update(status="done")


def save_held(*, older_than: float = 0.0) -> int:
    """Save the graphs that hold items (those held longer than ``older_than`` seconds) and mark
    the items done. Returns the items settled. A graph that cannot be saved now keeps them held
    (logged): the next drain tries again, a restart replays them."""
    since = timezone.now() - timedelta(seconds=older_than)
    held = OutboxItem.objects.filter(store="graph", status="held")
    architects = set(held.filter(done_at__lte=since).values_list("architect_id", flat=True))
    settled = 0
    for architect_id in sorted(architects):
        with _graph_writing:
            try:
                graph().save(architect_id)
            except MemoryServiceError as error:
                log.warning(
                    "outbox: the graph of architect %s was not saved: %s", architect_id, error
                )
                continue
            settled += _saved(architect_id)
    return settled


def recover_held() -> int:
    """Put held graph items back in the queue: the process that held them in memory is gone
    (a holder calls this once, before its first delivery). Returns how many."""
    return OutboxItem.objects.filter(store="graph", status="held").update(
        status="queued", done_at=None, claimed_until=None, next_attempt_at=timezone.now()
    )


def _recover_held_once() -> None:
    global _recovered
    if _recovered:
        return
    with _graph_writing:
        if not _recovered:
            requeued = recover_held()
            if requeued:
                log.warning(
                    "outbox: %s graph items held by a process that is gone, queued again", requeued
                )
            _recovered = True


def _graph_lane(groups: list[list[OutboxItem]], force: bool, result: Drained) -> None:
    """The graph's inserts for up to GRAPH_ROUND_SECONDS: the groups claimed, then what has
    come due meanwhile, until none is left."""
    budget = time.monotonic() + settings.GRAPH_ROUND_SECONDS
    while groups:
        _run_lane(groups, budget, result)
        if _spent(budget):
            return
        groups = _lanes(_claimed(None, force, settings.GRAPH_BATCH, graph=True))[1]


def _claimed(
    ids: Iterable[int] | None, force: bool, limit: int, *, graph: bool | None = None
) -> list[OutboxItem]:
    """Lease the queued items asked for (the given ones, or the due ones; only the graph's,
    or all but the graph's), oldest first."""
    query = OutboxItem.objects.filter(status="queued")
    if graph is True:
        query = query.filter(store="graph")
    elif graph is False:
        query = query.exclude(store="graph")
    if ids is not None:
        query = query.filter(pk__in=list(ids))
    elif not force:
        query = query.filter(next_attempt_at__lte=timezone.now())
    pks = list(query.order_by("next_attempt_at", "pk").values_list("pk", flat=True)[:limit])
    return _claim(pks, force=force or ids is not None)


def _lanes(claimed: list[OutboxItem]) -> tuple[list[list[OutboxItem]], list[list[OutboxItem]]]:
    """(everything but the graph, the graph) as groups: vector writes of one architect and
    kind as one batch (VECTOR_BATCH at most: one call of an embedding server for many notes),
    then the other single items; the graph's items of one architect as one insert
    (GRAPH_BATCH at most)."""
    vector_groups: dict[tuple[int, str], list[OutboxItem]] = {}
    graph_groups: dict[int, list[OutboxItem]] = {}
    singles: list[list[OutboxItem]] = []
    for item in claimed:
        if item.store == "vectors" and item.op == "add" and isinstance(item.payload, dict):
            key = (item.architect_id, str(item.payload.get("kind")))
            vector_groups.setdefault(key, []).append(item)
        elif item.store == "graph":
            graph_groups.setdefault(item.architect_id, []).append(item)
        else:
            singles.append([item])
    return (
        [*_chunked(vector_groups.values(), settings.VECTOR_BATCH), *singles],
        _chunked(graph_groups.values(), settings.GRAPH_BATCH),
    )


def _own_connection(work: Any, *args: Any) -> Any:
    """Work in a thread of its own, which closes the database connection it opened."""
    try:
        return work(*args)
    finally:
        connections.close_all()


def _run_lane(groups: list[list[OutboxItem]], budget: float | None, result: Drained) -> None:
    """Deliver groups in order until the round's time is spent (the first group always), or
    until this process stops (a round's, not a request's: a request delivers its own)."""
    for n, group in enumerate(groups):
        if budget is not None and (_stopping.is_set() if n == 0 else _spent(budget)):
            _release([i.pk for g in groups[n:] for i in g])
            break
        if group[0].store == "vectors" and group[0].op == "add":
            _deliver_batch(group[0].architect_id, str(group[0].payload.get("kind")), group, result)
        elif group[0].store == "graph":
            if budget is not None:  # as many as the round's time left holds, one at least
                room = max(1, int((budget - time.monotonic()) / _graph_pace.seconds))
                _release([i.pk for i in group[room:]])
                group = group[:room]
            started = time.monotonic()
            _deliver_graph_batch(group, result)
            _graph_pace.observe(len(group), time.monotonic() - started)
        else:
            _deliver_one(group[0], result)


def _release(pks: list[int]) -> None:
    """Give claimed items back to the queue undelivered (the next round takes them)."""
    if pks:
        OutboxItem.objects.filter(pk__in=pks).update(claimed_until=None)


class _Pace:
    """Seconds a graph item takes to deliver here, as a moving average of the batches seen: a
    round fits its graph batch to the time it has left, so one batch never holds the vectors
    told meanwhile for longer than a round (an in-process LightRAG insert costs ~0.3 s a note,
    so fifty at once would be a quarter of a minute)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def observe(self, items: int, seconds: float) -> None:
        if items > 0:
            self.seconds = 0.7 * self.seconds + 0.3 * max(seconds / items, 1e-3)


_graph_pace = _Pace(0.3)


def _chunked(lists: Any, size: int) -> list[list[OutboxItem]]:
    return [items[k : k + size] for items in lists for k in range(0, len(items), size)]


def _deliver_graph_batch(items: list[OutboxItem], result: Drained) -> None:
    """One graph insert for many items."""

    def insert() -> bool:
        merged: dict[str, list[Any]] = {"chunks": [], "entities": [], "relations": []}
        for item in items:
            for key, values in (_graph_parts(item) or {}).items():
                merged[key] += values
        if any(merged.values()):
            return graph().insert(architect_id=items[0].architect_id, **merged)
        return True

    with _graph_writing:
        _as_batch(items, insert, result)


def _deliver_one(item: OutboxItem, result: Drained) -> None:
    with _graph_writing if item.store == "graph" else nullcontext():
        try:
            saved = _deliver(item)
        except Exception as error:  # classified, recorded, and the drain goes on
            _settle_failed(item, error, result)
        else:
            _settle_delivered([item], result, saved=saved)


def _deliver_batch(architect_id: int, kind: str, items: list[OutboxItem], result: Drained) -> None:
    """One embedding call and one upsert for many items."""

    def add() -> None:
        batch = [v for item in items for v in _vector_items(item)]
        vectors().add(kind=kind, architect_id=architect_id, items=batch)  # type: ignore[arg-type]

    _as_batch(items, add, result)


def _as_batch(items: list[OutboxItem], act: Any, result: Drained) -> None:
    """Deliver many items by one act; if it fails, each item is tried on its own, so one bad
    item never holds the others back."""
    if len(items) == 1:
        _deliver_one(items[0], result)
        return
    try:
        saved = act() is not False
    except Exception:
        log.warning(
            "outbox: a batch of %s %s items failed; trying each", len(items), items[0].store
        )
        for item in items:
            _deliver_one(item, result)
        return
    _settle_delivered(items, result, saved=saved)


def _settle_delivered(items: list[OutboxItem], result: Drained, *, saved: bool) -> None:
    """Record items delivered by one act, with one UPDATE: ``done``, or ``held`` when the store
    holds them in memory (``done_at`` is when they became findable). A graph insert that saved
    also saved whatever the architect's graph held before: those are done too."""
    pks = [item.pk for item in items]
    with transaction.atomic():
        OutboxItem.objects.filter(pk__in=pks).update(
            status="done" if saved else "held",
            attempts=F("attempts") + 1,
            claimed_until=None,
            last_error="",
            done_at=timezone.now(),
        )
    result.delivered += pks
    if not saved:
        result.held += pks
    elif items[0].store == "graph":
        _saved(items[0].architect_id)


def requeue(ids: Iterable[int]) -> int:
    """Put dead items back in the queue (staff, once the cause is fixed)."""
    return OutboxItem.objects.filter(pk__in=list(ids), status="dead").update(
        status="queued", next_attempt_at=timezone.now(), claimed_until=None, done_at=None
    )


def state(architect: Architect, *, dead_shown: int = 5) -> dict[str, Any]:
    """How many of an architect's items wait and how many are dead, with the newest dead ones."""
    mine = OutboxItem.objects.filter(architect=architect)
    return {
        "queued": mine.filter(status="queued").count(),
        "dead": mine.filter(status="dead").count(),
        "dead_items": list(mine.filter(status="dead").order_by("-pk")[:dead_shown]),
    }


def hand_over(delay: float = 0.0) -> None:
    """Hand the outbox to Celery: a replay task, sent once the current transaction commits. A
    broker that is down is logged, never raised: the periodic sweep replays what is queued."""
    enqueue_job(REPLAY_TASK, countdown=delay)
