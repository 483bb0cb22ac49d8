"""Fixed personas: two architects, Alice and Bob, each with a memory key; Carol signs in."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from memory.models import ApiKey, Architect, User


def make_key(architect: Architect, max_depth: str = "standard") -> str:
    key = ApiKey(architect=architect, max_depth=max_depth)
    plaintext = key.set_new_key()
    key.save()
    return plaintext


@pytest.fixture
def alice(db: Any) -> Architect:
    return Architect.objects.create(name="alice")


@pytest.fixture
def bob(db: Any) -> Architect:
    return Architect.objects.create(name="bob")


class MemoryClient:
    """The contract as a caller sees it: POST a verb with a key, get the answer back."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.http = APIClient()
        self.http.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")

    def call(self, verb: str, expect: int = 200, **params: Any) -> dict[str, Any]:
        response = self.http.post(f"/api/v1/{verb}", params, format="json")
        assert response.status_code == expect, response.content
        return response.json()

    def remember(self, text: str, **params: Any) -> dict[str, Any]:
        return self.call("remember", text=text, **params)

    def recall(self, text: str, **params: Any) -> dict[str, Any]:
        return self.call("recall", text=text, **params)


@pytest.fixture
def client_for() -> Callable[..., MemoryClient]:
    def build(architect: Architect, max_depth: str = "standard") -> MemoryClient:
        return MemoryClient(make_key(architect, max_depth))

    return build


@pytest.fixture
def alice_api(alice: Architect, client_for: Callable[..., MemoryClient]) -> MemoryClient:
    return client_for(alice)


@pytest.fixture
def bob_api(bob: Architect, client_for: Callable[..., MemoryClient]) -> MemoryClient:
    return client_for(bob)


@pytest.fixture
def carol(db: Any) -> User:
    return User.objects.create_user("carol", password="carol-password")


@pytest.fixture
def staff(db: Any) -> User:
    return User.objects.create_user("sam", password="sam-password", is_staff=True)


@pytest.fixture
def grown(transactional_db: Any):
    """A database whose grown tables are dropped after the test.

    The product never drops a grown table; tests must, because the test runner's flush only
    empties the tables Django knows about, and ids restart, so stale rows would leak into the
    next test's architects. Growth needs real transactions (the schema editor opens its own
    on SQLite), hence ``transactional_db``.
    """
    yield
    from django.db import connection

    from memory.shape import physical

    with connection.cursor() as cursor:
        grown_tables = [
            t for t in connection.introspection.table_names(cursor) if t.startswith("mem_")
        ]
    root_last = sorted(grown_tables, key=lambda t: t == physical.ROOT_TABLE)
    with connection.schema_editor() as editor:
        for table in root_last:
            editor.execute(editor.sql_delete_table % {"table": editor.quote_name(table)})
