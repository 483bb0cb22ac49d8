from __future__ import annotations

import hmac
from typing import Any

from django.conf import settings
from rest_framework import authentication, exceptions, permissions

from memory.stores.door import HEADER


class MachineSecretAuthentication(authentication.BaseAuthentication):
    """Only the machine secret opens the internal door; a memory key is refused here (401)."""

    def authenticate(self, request: Any) -> tuple[Any, str] | None:
        given = request.headers.get(HEADER, "")
        if not given:
            return None
        if not hmac.compare_digest(given.encode(), settings.MACHINE_SECRET.encode()):
            raise exceptions.AuthenticationFailed("this is not the machine secret")
        return (_Machine(), "machine")

    def authenticate_header(self, request: Any) -> str:
        return f'{HEADER} realm="internal"'


class _Machine:
    is_authenticated = True


class IsMachine(permissions.BasePermission):
    def has_permission(self, request: Any, view: Any) -> bool:
        return request.auth == "machine"
