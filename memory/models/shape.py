"""The catalog of the grown shape: every table and column the memory created at run time.

The grown tables themselves are not Django models and migrations never see them; this catalog
(a normal model) records each one with its labels as given, its lemma key, and who made it.
Physical tables are shared by all architects (every row carries its architect); the catalog is
per architect, so one architect's shape is invisible to another.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

ENTRY_KINDS = [("table", "table"), ("column", "column")]


class ShapeEntry(models.Model):
    architect = models.ForeignKey(
        "memory.Architect", on_delete=models.CASCADE, related_name="shape"
    )
    kind = models.CharField(max_length=8, choices=ENTRY_KINDS)
    table = models.CharField(max_length=63, help_text="physical table (for a table: itself)")
    name = models.CharField(max_length=63, help_text="physical name after the naming function")
    labels = models.JSONField(default=list, help_text="labels as given, first one first")
    key = models.CharField(max_length=255, help_text="lemma key for near-duplicates")
    lemmas = models.JSONField(default=list, help_text="lemmas of every label, for level 1")
    scheme = models.CharField(max_length=32, help_text="transliteration scheme of the name")
    promoted_to = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="promoted_from"
    )
    run = models.ForeignKey("memory.Run", null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "catalog entry"
        verbose_name_plural = "catalog"
        constraints = [
            models.UniqueConstraint(
                fields=["architect", "kind", "table", "name"], name="shape_entry_once"
            )
        ]
        indexes = [models.Index(fields=["architect", "kind"], name="shape_entry_by_kind")]

    def __str__(self) -> str:
        where = "" if self.kind == "table" else f" in {self.table}"
        return f"{self.kind} {self.name}{where} ({self.labels[0] if self.labels else ''})"

    @property
    def label(self) -> str:
        return self.labels[0] if self.labels else self.name


class ValueKeyword(models.Model):
    """One lemma of one stored value, so level 1 can find a row by what it holds."""

    architect = models.ForeignKey("memory.Architect", on_delete=models.CASCADE, related_name="+")
    entry = models.ForeignKey(ShapeEntry, on_delete=models.CASCADE, related_name="value_keywords")
    row = models.BigIntegerField()
    lemma = models.CharField(max_length=64)

    class Meta:
        indexes = [
            models.Index(fields=["architect", "lemma"], name="value_keyword_lookup"),
            models.Index(fields=["entry", "row"], name="value_keyword_by_row"),
        ]

    def __str__(self) -> str:
        return self.lemma
