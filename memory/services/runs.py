"""Run records: open one per request cycle, close it with the facts, take verdicts from outside.

A run is closed in one place (``run_close``), whatever the verb; a run whose serving process
died is closed by the sweep (``close_orphans``), so none stays ``running`` after a crash.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable
from datetime import timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from memory.knowledge import fill
from memory.models import Architect, Run

ORPHAN = "run_orphaned: the process serving this run stopped before closing it ({process})"


def _start_ticks(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux), which tells a pid reused
    by another process from the one that opened the run."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


@lru_cache(maxsize=1)
def _host() -> str:
    return socket.gethostname()


def process_tag() -> str:
    """``host:pid:start`` of this process (the start is empty where /proc is not readable)."""
    pid = os.getpid()
    return f"{_host()}:{pid}:{_start_ticks(pid) or ''}"


def process_alive(tag: str) -> bool | None:
    """Is the process named by ``tag`` still running? None when this host cannot tell."""
    host, _, rest = tag.partition(":")
    pid_text, _, start = rest.partition(":")
    if host != _host() or not pid_text.isdigit() or not start:
        return None
    return _start_ticks(int(pid_text)) == start


def run_open(
    *,
    architect: Architect,
    verb: str,
    text: str,
    caller: str,
    channel: str,
    scope: list[dict[str, Any]] | None = None,
) -> Run:
    """``scope`` is the request's, kept in ``params`` from the start: the model's tools read
    it there (a recall's tables answer by the same scope rule as every level) until the close
    writes the full parameter record."""
    return Run.objects.create(
        architect=architect,
        verb=verb,
        text=text,
        caller=caller,
        channel=channel,
        process=process_tag(),
        params={"scope": list(scope or [])},
    )


def run_close(
    run: Run,
    *,
    usages: Iterable[Any] = (),
    error: str = "",
    failed: bool = False,
    **facts: Any,
) -> Run:
    """Write the facts of a finished cycle onto its run, the model's usage summed over every
    call the cycle made (``ModelResult``s), and mark it done or failed."""
    usages = [u for u in usages if u is not None]
    for name, value in facts.items():
        setattr(run, name, value)
    counted = ()
    if usages:
        # Added to what the run already counts: a research job that ended before this close (a
        # worker that was quick, or Celery's eager mode) has added its own calls.
        counted = _COUNTERS
        for name, value in (
            ("model_turns", sum(u.turns for u in usages)),
            ("tokens_in", sum(u.tokens_in for u in usages)),
            ("tokens_out", sum(u.tokens_out for u in usages)),
            ("cache_read_tokens", sum(u.cache_read_tokens for u in usages)),
            ("cache_creation_tokens", sum(u.cache_creation_tokens for u in usages)),
            ("model_seconds", round(sum(u.seconds for u in usages), 3)),
        ):
            setattr(run, name, F(name) + value)
        costs = [u.cost_usd for u in usages if u.cost_usd is not None]
        run.cost_usd = sum(costs) if costs else None
        run.thread = next((u.thread for u in reversed(usages) if u.thread), run.thread)
    run.status = "failed" if failed else "done"
    run.error = error[:4000]
    run.save()
    if counted:
        run.refresh_from_db(fields=list(counted))
    return run


_COUNTERS = (
    "model_turns",
    "tokens_in",
    "tokens_out",
    "cache_read_tokens",
    "cache_creation_tokens",
    "model_seconds",
)


def close_orphans() -> int:
    """Close ``running`` runs whose process is gone, and any older than RUN_STALE_SECONDS (a
    process on another host cannot be asked; a live one that failed to close its run is not
    waited for longer than any cycle may last). Returns how many were closed."""
    stale_before = timezone.now() - timedelta(seconds=settings.RUN_STALE_SECONDS)
    closed = 0
    for run in Run.objects.filter(status="running").only("id", "process", "created_at"):
        alive = process_alive(run.process) if run.process else None
        if alive is False or run.created_at < stale_before:
            closed += _close_orphan(run)
    return closed


def _close_orphan(run: Run) -> int:
    with transaction.atomic():
        closed = Run.objects.filter(pk=run.pk, status="running").update(
            status="failed", error=ORPHAN.format(process=run.process or "unknown")
        )
        if closed and Run.objects.filter(pk=run.pk, verb="remember").exists():
            fill.complete_orphan(run)
    return closed


def run_verdict_apply(
    *, architect: Architect, target: UUID, value: str, note: str, given_by: Run
) -> Run | None:
    """Record a verdict on an earlier run of the same architect; None when there is no such run.

    A later verdict replaces an earlier one: the asker may change their mind.
    """
    run = Run.objects.asked().filter(architect=architect, pk=target).first()
    if run is None or run.pk == given_by.pk:
        return None
    return verdict_record(run, value=value, note=note, given_by=given_by)


def verdict_record(run: Run, *, value: str, note: str, given_by: Run | None = None) -> Run:
    """Write a verdict on a run — the one place every verdict is written: one an asker gives
    (``run_verdict_apply``), and the one the memory's evolution run gets from the fate of the
    candidate it wrote (no run gave that one). A later verdict replaces an earlier one."""
    run.verdict = value
    run.verdict_note = note
    run.verdict_at = timezone.now()
    run.verdict_run = given_by
    run.save(update_fields=["verdict", "verdict_note", "verdict_at", "verdict_run"])
    return run
