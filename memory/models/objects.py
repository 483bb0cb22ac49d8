"""Objects: a whole thing with an eternal id, found by its card (PASSPORT.md §13)."""

from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone

ORIGINS = [("upload", "upload"), ("answer", "answer")]


class MemoryObject(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    architect = models.ForeignKey(
        "memory.Architect", on_delete=models.CASCADE, related_name="memory_objects"
    )
    name = models.CharField(max_length=255)
    media_type = models.CharField(max_length=127)
    description = models.TextField(blank=True)
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    storage_key = models.CharField(max_length=500)
    origin = models.CharField(max_length=8, choices=ORIGINS)
    summary = models.TextField(blank=True)
    # Where and when what it holds is true, as a note's scope (memory.scope): kept with it.
    scope = models.JSONField(default=list, blank=True)
    run = models.ForeignKey("memory.Run", null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "object"

    def __str__(self) -> str:
        return f"{self.name} ({self.media_type})"


class ObjectKeyword(models.Model):
    """One term of an object's title or description: level 1 finds objects by them."""

    architect = models.ForeignKey("memory.Architect", on_delete=models.CASCADE, related_name="+")
    object = models.ForeignKey(MemoryObject, on_delete=models.CASCADE, related_name="keywords")
    lemma = models.CharField(max_length=64)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["object", "lemma"], name="object_keyword_once")
        ]
        indexes = [models.Index(fields=["architect", "lemma"], name="object_keyword_lookup")]

    def __str__(self) -> str:
        return self.lemma
