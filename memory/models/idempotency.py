"""Idempotent remember: the first answer given for an ``Idempotency-Key`` (PASSPORT.md §14.2)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class IdempotencyRecord(models.Model):
    """One key of one architect: the body it came with and, once given, the answer.

    Written in the same transaction as the note, so a retry after any failure finds it."""

    architect = models.ForeignKey("memory.Architect", on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)  # sha256 of the canonical JSON body
    run = models.ForeignKey("memory.Run", null=True, blank=True, on_delete=models.SET_NULL)
    answer = models.JSONField(null=True, blank=True)
    status = models.PositiveSmallIntegerField(default=200)  # the HTTP status the answer had
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["architect", "key"], name="idempotency_key_once")
        ]

    def __str__(self) -> str:
        return f"{self.key} ({'answered' if self.answer is not None else 'in progress'})"
