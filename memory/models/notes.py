"""Verbatim memory: every statement is kept as said, with its scope, before anything else happens."""

from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone


class Note(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    architect = models.ForeignKey(
        "memory.Architect", on_delete=models.CASCADE, related_name="notes"
    )
    text = models.TextField()
    scope = models.JSONField(default=list, blank=True)
    # Things the phrase names and their relations: from the model's phrase parse, or from the
    # offline NER when no model is configured. The graph is filled from them.
    entities = models.JSONField(default=dict, blank=True)
    sender = models.CharField(max_length=200)
    run = models.ForeignKey(
        "memory.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="notes"
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.text[:80]


class NoteKeyword(models.Model):
    """One lemma of one note; the architect is repeated here so the lookup index is one B-tree."""

    architect = models.ForeignKey("memory.Architect", on_delete=models.CASCADE, related_name="+")
    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="keywords")
    lemma = models.CharField(max_length=64)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["note", "lemma"], name="note_keyword_once")]
        indexes = [models.Index(fields=["architect", "lemma"], name="note_keyword_lookup")]

    def __str__(self) -> str:
        return self.lemma
