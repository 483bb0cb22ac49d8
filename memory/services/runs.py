"""Run records: open one per request cycle, close it with the facts, take verdicts from outside."""

from __future__ import annotations

from uuid import UUID

from django.utils import timezone

from memory.models import Architect, Run


def run_open(*, architect: Architect, verb: str, text: str, caller: str, channel: str) -> Run:
    return Run.objects.create(
        architect=architect, verb=verb, text=text, caller=caller, channel=channel
    )


def run_verdict_apply(
    *, architect: Architect, target: UUID, value: str, note: str, given_by: Run
) -> Run | None:
    """Record a verdict on an earlier run of the same architect; None when there is no such run.

    A later verdict replaces an earlier one: the asker may change their mind.
    """
    run = Run.objects.filter(architect=architect, pk=target).first()
    if run is None or run.pk == given_by.pk:
        return None
    run.verdict = value
    run.verdict_note = note
    run.verdict_at = timezone.now()
    run.verdict_run = given_by
    run.save(update_fields=["verdict", "verdict_note", "verdict_at", "verdict_run"])
    return run
