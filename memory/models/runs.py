"""Run records: the facts of every request cycle (PASSPORT.md §8), and the verdict from outside."""

from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone

# "evolve": the model writing a candidate skill (a shadow-channel run: it answers nobody).
EVOLVE = "evolve"
VERBS = [("remember", "remember"), ("recall", "recall"), (EVOLVE, EVOLVE)]
STATUSES = [("running", "running"), ("done", "done"), ("failed", "failed")]
VERDICTS = [("confirm", "confirm"), ("reject", "reject")]


# A shadow run replays a real request with a candidate skill (PASSPORT.md «Эволюция навыков»):
# it is never an answer to anyone, so nothing that looks runs up by id or lists them sees it.
SHADOW = "shadow"


class RunQuerySet(models.QuerySet):
    def asked(self) -> RunQuerySet:
        """Runs that answered someone: every run but the shadow ones."""
        return self.exclude(channel=SHADOW)

    def judged_work(self) -> RunQuerySet:
        """Runs whose outcome is real and may be judged: those that answered someone, and the
        memory's own evolution runs (the model writing a candidate: its verdict is the fate of
        what it wrote) — but never a replay of either."""
        return self.filter(
            ~models.Q(channel=SHADOW) | models.Q(verb=EVOLVE, shadow_case__isnull=True)
        )


class Run(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    architect = models.ForeignKey("memory.Architect", on_delete=models.CASCADE, related_name="runs")
    verb = models.CharField(max_length=16, choices=VERBS)
    text = models.TextField(blank=True)
    caller = models.CharField(max_length=200)
    channel = models.CharField(max_length=16)  # "api", "playground" or "shadow"
    status = models.CharField(max_length=8, choices=STATUSES, default="running")
    depth_asked = models.CharField(max_length=16, blank=True)
    depth_granted = models.CharField(max_length=16, blank=True)
    depth_used = models.PositiveSmallIntegerField(default=0)
    kind = models.CharField(max_length=32, blank=True)
    found = models.BooleanField(null=True)
    model_turns = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cache_read_tokens = models.PositiveIntegerField(default=0)
    cache_creation_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=10, decimal_places=6, null=True, blank=True)
    seconds = models.FloatField(default=0)
    # The seconds the model's calls took: a shadow run replays only a cycle's model part, so its
    # cost is compared with the real run's on these, not on the whole cycle's seconds.
    model_seconds = models.FloatField(default=0)
    stores = models.JSONField(default=list, blank=True)
    skills = models.JSONField(default=list, blank=True)
    tools = models.JSONField(default=list, blank=True)
    params = models.JSONField(default=dict, blank=True)
    report = models.JSONField(default=list, blank=True)
    # What the relearning cycle kept from this run's answer: every id, and each store's status.
    relearned = models.JSONField(default=dict, blank=True)
    # The ids of what the answer returned (notes, summaries, objects): a later recall naming
    # this run in previous_results is not given them again.
    returned = models.JSONField(default=list, blank=True)
    thread = models.CharField(max_length=200, blank=True)
    error = models.TextField(blank=True)
    # The process serving this cycle ("host:pid:start"): the sweep closes a run whose process is
    # gone (PASSPORT.md §14.2), so no run stays ``running`` after a crash.
    process = models.CharField(max_length=120, blank=True)
    # The verdict comes from outside (a later request's `verdict` parameter); until then the
    # cycle is incomplete, not successful (PASSPORT.md §8).
    verdict = models.CharField(max_length=16, choices=VERDICTS, blank=True)
    verdict_note = models.TextField(blank=True)
    verdict_at = models.DateTimeField(null=True, blank=True)
    verdict_run = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="verdicts_given"
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.verb} {self.id} ({self.created_at:%Y-%m-%d %H:%M})"

    @property
    def complete(self) -> bool:
        return bool(self.verdict)
