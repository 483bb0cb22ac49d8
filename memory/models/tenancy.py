"""Tenancy and doors: an architect owns every memory row; keys open the contract for one architect."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils import timezone

from memory.ladder import DEFAULT_DEPTH, DEPTH_WORDS

DEPTH_CHOICES = [(word, word) for word in DEPTH_WORDS]


class Architect(models.Model):
    """The tenant. One architect never sees another's rows."""

    name = models.CharField(max_length=100, unique=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    # The full-text index's statistics (BM25's N and mean length), kept in the transaction that
    # writes each note (``memory.knowledge.notes``), so level 1 reads them with one primary key
    # instead of counting every note per search. ``notes.recount`` recomputes them exactly.
    notes_count = models.PositiveIntegerField(default=0, editable=False)
    notes_length = models.BigIntegerField(default=0, editable=False)
    notes_near_length = models.BigIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class User(AbstractUser):
    """A person who signs in (the playground, the admin). Belongs to one architect."""

    architect = models.ForeignKey(
        Architect, null=True, blank=True, on_delete=models.PROTECT, related_name="users"
    )


def _digest(key: str) -> str:
    # Keys carry 256 bits of randomness, so one round of SHA-256 is enough: a slow password
    # hash would only add latency to every request without adding strength.
    return hashlib.sha256(key.encode()).hexdigest()


class ApiKeyQuerySet(models.QuerySet["ApiKey"]):
    def active(self) -> ApiKeyQuerySet:
        return self.filter(revoked_at__isnull=True)


class ApiKey(models.Model):
    """A memory key: stored hashed, shown once, bound to one architect, with a maximum depth."""

    PREFIX = "mem"

    architect = models.ForeignKey(Architect, on_delete=models.CASCADE, related_name="keys")
    name = models.CharField(max_length=100, blank=True)
    lookup = models.CharField(max_length=16, unique=True, editable=False)
    digest = models.CharField(max_length=64, editable=False)
    max_depth = models.CharField(max_length=16, choices=DEPTH_CHOICES, default=DEFAULT_DEPTH)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        verbose_name = "memory key"

    def __str__(self) -> str:
        return f"{self.PREFIX}_{self.lookup}… ({self.architect}, {self.max_depth})"

    def set_new_key(self) -> str:
        """Give this key fresh material and return the plaintext; it is never stored."""
        self.lookup = secrets.token_hex(6)
        plaintext = f"{self.PREFIX}_{self.lookup}_{secrets.token_urlsafe(32)}"
        self.digest = _digest(plaintext)
        return plaintext

    @classmethod
    def find(cls, plaintext: str) -> ApiKey | None:
        parts = plaintext.split("_", 2)
        if len(parts) != 3 or parts[0] != cls.PREFIX:
            return None
        key = cls.objects.active().select_related("architect").filter(lookup=parts[1]).first()
        if key is None or not hmac.compare_digest(key.digest, _digest(plaintext)):
            return None
        return key
