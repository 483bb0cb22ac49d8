"""Who is calling: a memory key (the contract's door) or a signed-in person (the playground).

Both become a ``Caller``: the architect whose rows the request may touch, and the depth cap
(a key carries one; a signed-in architect asking in the browser has none — PASSPORT.md §4, fork 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import get_language
from rest_framework import authentication, exceptions, permissions

from memory.i18n import Text
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


class NoMemory(PermissionDenied):
    """A signed-in person whose account has no architect: they are given no memory at all.

    A user belongs to an architect only by explicit membership (``User.architect``, set by staff
    in the admin or with ``manage.py memory_member``); a username that happens to equal an
    architect's name grants nothing. The playground answers this with its own page
    (``playground.membership``); anywhere else it is a plain 403.
    """


def caller_for_user(user: Any) -> Caller:
    """A signed-in person speaks for the architect they are a member of, and for no other."""
    if user.architect_id is None:
        raise NoMemory(f"user {user.get_username()!r} is not a member of any architect")
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


LOCKED = {
    "title": Text(ru="Вход временно закрыт", en="Sign-in temporarily locked"),
    "lead": Text(
        ru=(
            "Слишком много неудачных попыток входа для этой учётной записи с этого адреса. "
            "Вход закрыт на {minutes} мин., даже с верным паролем; попробуйте позже."
        ),
        en=(
            "Too many failed sign-in attempts for this account from this address. Signing in "
            "is locked for {minutes} min, even with the right password; try again later."
        ),
    ),
    "staff": Text(
        ru="Персонал может снять блокировку раньше: manage.py axes_reset_username ИМЯ.",
        en="Staff can lift it sooner: manage.py axes_reset_username NAME.",
    ),
}


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None, credentials: Any
) -> HttpResponse:
    """django-axes' answer to a locked-out sign-in (the playground's and the admin's): a page
    in the page's language, 429 with Retry-After."""
    lang = "en" if (get_language() or "ru").startswith("en") else "ru"
    minutes = max(1, int(settings.AXES_COOLOFF_TIME.total_seconds() // 60))
    context = {
        "lang": lang,
        "title": LOCKED["title"](lang),
        "lead": LOCKED["lead"](lang, minutes=minutes),
        "staff": LOCKED["staff"](lang),
    }
    response = render(request, "registration/locked.html", context, status=429)
    response["Retry-After"] = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    return response
