"""The outbox: every write to the vectors or the graph is first a row here, committed in the same
transaction as the note it comes from, then delivered. A store that is down keeps the row
``queued`` (retried with backoff, never given up); an item that can never be delivered is put
aside as ``dead`` with its reason and never blocks another item or tenant (PASSPORT.md §14.1)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

# held: delivered into the in-process graph's memory (findable) and not yet saved to its files.
STATUSES = [("queued", "queued"), ("held", "held"), ("done", "done"), ("dead", "dead")]


class OutboxItem(models.Model):
    architect = models.ForeignKey("memory.Architect", on_delete=models.CASCADE, related_name="+")
    store = models.CharField(max_length=16)  # vectors | graph
    op = models.CharField(max_length=32)
    payload = models.JSONField()
    run = models.ForeignKey("memory.Run", null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=8, choices=STATUSES, default="queued", db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    # A drainer that takes an item leases it until then; delivery runs outside any transaction,
    # and an expired lease (the drainer died) lets another take it. Delivery is idempotent.
    claimed_until = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["status", "next_attempt_at"], name="outbox_due")]

    def __str__(self) -> str:
        return f"{self.store}.{self.op} #{self.pk} ({self.status})"
