"""What the agent did, as facts: every tool call, and every model thread the memory holds."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class ToolCall(models.Model):
    """One call of one agent tool, written by the tool itself — the run's record of what happened,
    never the model's account of it."""

    run = models.ForeignKey("memory.Run", on_delete=models.CASCADE, related_name="tool_calls")
    architect = models.ForeignKey("memory.Architect", on_delete=models.CASCADE, related_name="+")
    tool = models.CharField(max_length=64)
    arguments = models.JSONField(default=dict)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    seconds = models.FloatField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.tool} ({'error' if self.error else 'ok'})"


class Thread(models.Model):
    """A model conversation the memory started; its id goes out as ``thread``.

    Bound to the architect (no one continues another's thread) and to the backend's working
    folder (the CLI finds its transcripts only there). HTTP backends keep the messages here.
    """

    id = models.CharField(primary_key=True, max_length=200)
    architect = models.ForeignKey(
        "memory.Architect", on_delete=models.CASCADE, related_name="threads"
    )
    backend = models.CharField(max_length=32)
    workdir = models.CharField(max_length=500, blank=True)
    messages = models.JSONField(default=list, blank=True)
    turns = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.backend}:{self.id}"
