"""Research: level 5, a job on Celery that one recall started (PASSPORT.md §16)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

STATUSES = [("queued", "queued"), ("running", "running"), ("done", "done"), ("failed", "failed")]


class Research(models.Model):
    """One research job, named by the run of the recall that started it: the caller fetches it
    by naming that run (``previous_results``). Its progress is written as it goes."""

    run = models.OneToOneField(
        "memory.Run", primary_key=True, on_delete=models.CASCADE, related_name="research"
    )
    architect = models.ForeignKey(
        "memory.Architect", on_delete=models.CASCADE, related_name="researches"
    )
    question = models.TextField()
    scope = models.JSONField(default=list, blank=True)
    lang = models.CharField(max_length=8)
    status = models.CharField(max_length=8, choices=STATUSES, default="queued")
    # levels reached, entities tried, terms tried, model turns, seconds, the steps in order
    progress = models.JSONField(default=dict, blank=True)
    answer = models.JSONField(default=dict, blank=True)  # the answer body, when done
    kind = models.CharField(max_length=32, blank=True)
    relearned = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "research"

    def __str__(self) -> str:
        return f"{self.question[:60]} ({self.status})"
