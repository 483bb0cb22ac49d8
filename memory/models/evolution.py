"""Skill evolution (PASSPORT.md «Эволюция навыков»): a candidate's life and its shadow cases.

The candidate's text lives in the skills repository (law 0: the definition in the folder); here
are its measurements: the share counter, the shadow cases side by side with the runs they
replayed, and how it ended (promoted, deleted, killed, replaced) and why.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

CANDIDATE_STATUSES = [
    ("open", "open"),
    ("promoted", "promoted"),
    ("deleted", "deleted"),  # lost, or too few verdicts after the most cases it may have
    ("killed", "killed"),  # by staff
    ("replaced", "replaced"),  # a new text was written over it (its cases measured the old one)
]
CASE_STATUSES = [
    ("queued", "queued"),
    ("running", "running"),
    ("done", "done"),
    ("failed", "failed"),
]


class SkillCandidate(models.Model):
    skill = models.CharField(max_length=100, db_index=True)
    version = models.CharField(max_length=12)  # skills_repo.version of the candidate's text
    active_version = models.CharField(max_length=12)  # the version it is measured against
    status = models.CharField(max_length=10, choices=CANDIDATE_STATUSES, default="open")
    opened_by = models.CharField(max_length=150)  # "model:<backend>", "staff:<user>"
    opened_why = models.TextField(blank=True)
    opened_commit = models.CharField(max_length=40, blank=True)
    # The memory's evolution run whose model wrote it (evolve-skill's call), when one did: the
    # candidate's fate is that run's verdict (``candidates._judge_writer``), which is what
    # evolve-skill's own candidates are measured on.
    writer = models.ForeignKey(
        "memory.Run",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="candidates_written",
    )
    # Real requests that used the skill since the candidate opened: the shadow share is taken
    # of these (every 1/SHADOW_RATE-th one is replayed), so the share holds exactly.
    eligible = models.PositiveIntegerField(default=0)
    decided_why = models.TextField(blank=True)
    decided_commit = models.CharField(max_length=40, blank=True)
    figures = models.JSONField(default=dict, blank=True)  # the figures the decision read
    opened_at = models.DateTimeField(default=timezone.now)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-opened_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["skill"],
                condition=models.Q(status="open"),
                name="one_open_candidate_per_skill",
            )
        ]

    def __str__(self) -> str:
        return f"{self.skill} candidate {self.version} ({self.status})"


class ShadowCase(models.Model):
    """One real request replayed with the candidate: the real run and the shadow run side by
    side. The shadow's answer is never kept or returned: only whether it agrees with the answer
    the real run gave (the outside verdict on that answer then tells for both)."""

    candidate = models.ForeignKey(SkillCandidate, on_delete=models.CASCADE, related_name="cases")
    run = models.ForeignKey("memory.Run", on_delete=models.CASCADE, related_name="shadow_cases")
    shadow = models.OneToOneField(
        "memory.Run", on_delete=models.CASCADE, related_name="shadow_case"
    )
    status = models.CharField(max_length=8, choices=CASE_STATUSES, default="queued")
    # Model turns this case was expected to cost when it was let in under the daily cap.
    estimate = models.PositiveIntegerField(default=1)
    # What the replay needs of the request (text, scope, lang, depth), and the real run's answer
    # in brief (found, ids, content terms), to compare the shadow's with.
    request = models.JSONField(default=dict, blank=True)
    real_answer = models.JSONField(default=dict, blank=True)
    agrees = models.BooleanField(null=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"shadow of {self.run_id} ({self.status})"
