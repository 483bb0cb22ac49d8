"""The reference instruction: the version of MEMORY-AGENT.md a human approved (PASSPORT.md §9).

Only staff change it (admin or a command); no agent tool reaches it. Resetting the instruction
writes the latest reference back to the file and touches nothing else.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class InstructionReference(models.Model):
    text = models.TextField()
    note = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "reference instruction"

    def __str__(self) -> str:
        return f"reference of {self.created_at:%Y-%m-%d %H:%M} ({len(self.text)} chars)"
