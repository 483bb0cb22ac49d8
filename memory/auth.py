"""Who is calling: a memory key (the contract's door) or a signed-in person (the playground).

Both become a ``Caller``: the architect whose rows the request may touch, and the depth cap
(a key carries one; a signed-in architect asking in the browser has none — SPEC §3, fork 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from django.utils import timezone
from rest_framework import authentication, exceptions, permissions

from memory.ladder import DepthWord
from memory.models import ApiKey, Architect

Channel = Literal["api", "playground"]


@dataclass(frozen=True)
class Caller:
    architect: Architect
    name: str
    channel: Channel
    depth_cap: DepthWord | None
    is_authenticated: bool = True  # DRF reads request.user.is_authenticated


def caller_for_key(key: ApiKey) -> Caller:
    return Caller(
        architect=key.architect,
        name=f"key:{key.lookup}" + (f" ({key.name})" if key.name else ""),
        channel="api",
        depth_cap=key.max_depth,  # type: ignore[arg-type]
    )


def caller_for_user(user: Any) -> Caller:
    """A signed-in person speaks for their architect; one is created on first use if missing."""
    if user.architect_id is None:
        architect, _ = Architect.objects.get_or_create(name=user.get_username())
        user.architect = architect
        user.save(update_fields=["architect"])
    return Caller(
        architect=user.architect,
        name=f"user:{user.get_username()}",
        channel="playground",
        depth_cap=None,
    )


class MemoryKeyAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer mem_…``. No header → 401 no_key; an unknown key → 401 bad_key."""

    keyword = "Bearer"

    def authenticate(self, request: Any) -> tuple[Caller, ApiKey] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, token = header.partition(" ")
        if scheme != self.keyword or not token.strip():
            raise exceptions.AuthenticationFailed("use 'Authorization: Bearer <memory key>'")
        key = ApiKey.find(token.strip())
        if key is None:
            raise exceptions.AuthenticationFailed("this memory key is not valid")
        now = timezone.now()
        if key.last_used_at is None or now - key.last_used_at > timedelta(minutes=1):
            ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        return caller_for_key(key), key

    def authenticate_header(self, request: Any) -> str:
        return f'{self.keyword} realm="memory"'


class HasMemoryKey(permissions.BasePermission):
    def has_permission(self, request: Any, view: Any) -> bool:
        return isinstance(request.auth, ApiKey)
