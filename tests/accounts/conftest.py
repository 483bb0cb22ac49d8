from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _fast_passwords(settings: Any) -> None:
    """Sign-in tests check many passwords: a fast hasher keeps them quick (what is under test
    is the counting and the lockout, not the hash)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
