"""Summaries: what an expensive answer taught the memory, kept so the next such question is
cheap (PASSPORT.md «Цикл дообучения»)."""

from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone

WRITERS = [("code", "code"), ("model", "model")]
CLAIMS = [("inferred", "inferred"), ("denied", "denied")]


class SummaryQuerySet(models.QuerySet):
    def answering(self) -> SummaryQuerySet:
        """The summaries that still answer: a denied conclusion's summary stays, and answers no
        more (its denial does)."""
        return self.filter(denied_by__isnull=True)


class Summary(models.Model):
    """One relearning cycle's summary: the question, what was found and where the detail lies
    (the artifact object), the chain of basis, and where its copies went."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    architect = models.ForeignKey(
        "memory.Architect", on_delete=models.CASCADE, related_name="summaries"
    )
    run = models.ForeignKey(
        "memory.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="summaries"
    )
    question = models.TextField()
    text = models.TextField()
    level = models.PositiveSmallIntegerField(help_text="the level whose answer it keeps")
    kind = models.CharField(max_length=32, help_text="the kind of the answer it keeps")
    scope = models.JSONField(default=list, blank=True)
    basis = models.JSONField(default=list, blank=True, help_text="the facts it rests on")
    object = models.ForeignKey(
        "memory.MemoryObject", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    written_by = models.CharField(max_length=8, choices=WRITERS)
    # inferred: what an answer found · denied: a hypothesis the architect rejected, kept so the
    # same chain does not propose it again (PASSPORT.md §16).
    claim = models.CharField(max_length=8, choices=CLAIMS, default="inferred")
    denies = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="denials"
    )
    denied_run = models.ForeignKey(
        "memory.Run",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="the run whose conclusion this claim denies",
    )
    # Set on an earlier summary once its conclusion is denied: it stays, and answers no more.
    denied_by = models.ForeignKey(
        "memory.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    denied_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = SummaryQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "summaries"

    def __str__(self) -> str:
        return self.question[:80]


class SummaryKeyword(models.Model):
    """One term of a summary's question or text: level 1 finds summaries by them."""

    architect = models.ForeignKey("memory.Architect", on_delete=models.CASCADE, related_name="+")
    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="keywords")
    lemma = models.CharField(max_length=64)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["summary", "lemma"], name="summary_keyword_once")
        ]
        indexes = [models.Index(fields=["architect", "lemma"], name="summary_keyword_lookup")]

    def __str__(self) -> str:
        return self.lemma


class SummaryLink(models.Model):
    """The link table of the relearning cycle's step 6: which row of a grown table (the entity the
    knowledge is about — a friend, a project) a summary concerns."""

    architect = models.ForeignKey("memory.Architect", on_delete=models.CASCADE, related_name="+")
    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="links")
    table = models.CharField(max_length=63, help_text="the physical grown table")
    row = models.BigIntegerField()
    entity = models.CharField(max_length=255, help_text="the entity as the summary names it")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["summary", "table", "row"], name="summary_link_once")
        ]
        indexes = [models.Index(fields=["architect", "table", "row"], name="summary_link_row")]

    def __str__(self) -> str:
        return f"{self.entity} → {self.summary_id}"
