"""Verbatim memory: every statement is kept as said, with its scope, before anything else happens."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import models
from django.utils import timezone

from memory import scope as scopes


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
    # The full-text index's document lengths: the note's own terms, and the terms its
    # conversation neighbours lend it (see NoteKeyword).
    length = models.PositiveIntegerField(default=0)
    near_length = models.PositiveIntegerField(default=0)
    # The conversation this note was told in (the pk of its first note: the same sender, no gap
    # longer than NOTES_CONTEXT_GAP_SECONDS between neighbours) and its place there; the ranking
    # lifts notes whose neighbours also match (``memory.knowledge.notes.lift``).
    talk = models.UUIDField(null=True, blank=True)
    position = models.PositiveIntegerField(default=0)
    # A later note about the same thing (same subject and attribute, same scope) that replaced
    # this one's value: recall answers the newer as current and names this one as history.
    # Nothing is deleted (memory.knowledge.supersede).
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    superseded_at = models.DateTimeField(null=True, blank=True)
    # The scope as level 1's SQL query filters it (memory.scope.flat_places / span), kept in
    # step with ``scope`` on every save; ``scope`` itself stays the record and has the last word.
    places = models.TextField(blank=True, default="")
    scope_start = models.DateField(null=True, blank=True)
    scope_end = models.DateField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["architect", "sender", "created_at"], name="note_conversation")
        ]

    def __str__(self) -> str:
        return self.text[:80]

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.places = scopes.flat_places(self.scope or [])
        self.scope_start, self.scope_end = scopes.span(self.scope or []) or (None, None)
        fields = kwargs.get("update_fields")
        if fields is not None and "scope" in fields:
            kwargs["update_fields"] = {*fields, "places", "scope_start", "scope_end"}
        super().save(*args, **kwargs)


class NoteKeyword(models.Model):
    """One term of one note in the level-1 full-text index (a posting); the architect is
    repeated here so the lookup index is one B-tree.

    ``own`` counts the term in the note itself; ``near`` counts it in the notes remembered just
    before and after it in the same conversation, which the ranking weighs lower
    (``memory.knowledge.notes``). A posting with ``own == 0`` exists for the context only.
    ``length`` and ``near_length`` repeat the note's (``Note.length``, ``Note.near_length``), kept
    in step by the note's transaction: BM25 reads a posting's document length from the index
    itself, so ranking never visits the notes table row by row. ``terms`` is how many distinct
    terms the note's own text holds, on its own postings (0 on a context-only one): supersession
    looks up only the notes whose size could make them an earlier value of a new note
    (``memory.knowledge.supersede``).
    """

    architect = models.ForeignKey("memory.Architect", on_delete=models.CASCADE, related_name="+")
    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="keywords")
    lemma = models.CharField(max_length=64)
    own = models.PositiveIntegerField(default=1)
    near = models.PositiveIntegerField(default=0)
    length = models.PositiveIntegerField(default=0)
    near_length = models.PositiveIntegerField(default=0)
    terms = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["note", "lemma"], name="note_keyword_once")]
        # Covering for level 1: a term's document frequency (own > 0) and its BM25 postings,
        # document lengths included, are read from the index alone.
        indexes = [
            models.Index(
                fields=["architect", "lemma", "own", "near", "length", "near_length", "note"],
                name="note_keyword_ranking",
            ),
            # Supersession's candidates: the own postings of a term, by the note's size.
            models.Index(
                fields=["architect", "lemma", "terms", "note"],
                name="note_keyword_sizes",
                condition=models.Q(own__gt=0),
            ),
        ]

    def __str__(self) -> str:
        return self.lemma
