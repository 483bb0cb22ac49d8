"""Fixed personas: two architects, Alice and Bob, each with a memory key; Carol signs in
(a member of her own architect).

Every test gets its own folder for the embedded stores (Qdrant local, LightRAG, objects):
ids restart between tests, so shared folders would leak one test's vectors into the next.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from memory.models import ApiKey, Architect, User

pytest_plugins = ["tests.lightrag_server.fixtures"]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config: Any, specs: list[Any]) -> None:
    """Under pytest-xdist (`make test` runs -n), each worker gets a data folder of its own.

    memory/settings.py makes one data folder per run (the SQLite database, the filesystem Celery
    broker, the secrets) and exports MEMORY_DATA_DIR so the servers and workers a test starts
    share it. The xdist workers are children of this process, which exported it already: left
    alone they would all share one folder. Each gets a folder inside this run's instead, named
    after it, so on PostgreSQL its test database's name (built from the folder's) is its own
    too. When settings made this run's folder, it is removed, theirs with it, when this process
    exits (after the workers).
    """
    from django.conf import settings

    for spec in specs:
        folder = settings.DATA_DIR / f"{settings.DATA_DIR.name}-{spec.id}"
        folder.mkdir(exist_ok=True)
        spec.env["MEMORY_DATA_DIR"] = str(folder)


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """Under `make test` (xdist, ``--dist worksteal``), the long tests start first on every
    worker: the whole bench sets, then the other ``slow`` ones, dealt in turn to the workers,
    each worker's share at the head of the run of tests it is given, and the short ones after.
    worksteal gives each of N workers one run of the collected order (the i-th of N takes
    ``left // (N - i)``), and a worker that runs dry takes half of what another has left; so the
    benches run side by side from the start instead of one worker meeting them at the end
    while the others idle. Every worker computes the same order (xdist requires it); the tests
    are only reordered, none is left out."""
    _skip_postgres_only(items)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))

    def weight(item: Any) -> int:
        if item.get_closest_marker("slow") is None:
            return 2
        return 0 if "tests/bench/" in item.nodeid else 1

    ordered = sorted(items, key=weight)  # stable: within a group, the collected order
    long = [item for item in ordered if weight(item) < 2]
    short = ordered[len(long) :]
    runs: list[list[Any]] = [long[i::workers] for i in range(workers)]
    left = len(items)
    for i, run in enumerate(runs):
        size = left // (workers - i)
        take = max(0, size - len(run))
        run += short[:take]
        del short[:take]
        left -= len(run)
    runs[-1] += short
    items[:] = [item for run in runs for item in run]


def _skip_postgres_only(items: list[Any]) -> None:
    """``postgres_only`` tests are skipped on another engine before any of their fixtures is set
    up (a served memory_run takes seconds to start and to stop)."""
    from django.conf import settings

    if settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        return
    skip = pytest.mark.skip(reason="PostgreSQL's; this run is on SQLite (DATABASE_URL)")
    for item in items:
        if item.get_closest_marker("postgres_only") is not None:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _fast_passwords(settings: Any) -> None:
    """Users are made and signed in across the suite: a fast hasher keeps that quick (what is
    under test is who may do what, never the hash). PBKDF2's default cost spent about 40 s of
    processor time in a run of the suite."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _own_stores(tmp_path: Any, settings: Any) -> Any:
    from memory import stores

    stores.reset()
    # Each test has its own skills repository (the live skills and instruction, filled from
    # the release when first read): a candidate, a promotion or a reset never reaches the next.
    settings.SKILLS_REPO_DIR = tmp_path / "skills"
    settings.MEMORY_STORES_DIR = tmp_path / "stores"
    settings.STORAGES = {
        **settings.STORAGES,
        "objects": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "stores" / "objects")},
        },
    }
    # No worker takes research jobs in most tests (generated requests send depth extreme with
    # wait): a wait would sit out its whole bound. Tests of the wait itself run the job eagerly,
    # so it has ended before the wait begins.
    settings.RESEARCH_WAIT_SECONDS = 0
    # Most tests ask right after telling, so the stores are filled in the request; capture
    # first (the production default) has its own tests (tests/stores/test_capture_first.py).
    settings.STORES_FILL = "inline"
    yield
    stores.reset()


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
    """Signs in; a member of her own architect "carol". Membership is explicit: a user is never
    attached to an architect because their names match."""
    architect = Architect.objects.create(name="carol")
    return User.objects.create_user("carol", password="carol-password", architect=architect)


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


class FakeClaude:
    """The fake `claude` on PATH (tests/fake_claude/fake_claude.py) and what it recorded."""

    def __init__(self, root: Any) -> None:
        self.home = root / "claude-home"
        self.script_path = root / "claude-script.json"
        self.script([])

    def script(self, rules: list[dict[str, Any]]) -> None:
        import json

        self.script_path.write_text(json.dumps({"rules": rules}, ensure_ascii=False))

    def calls(self) -> list[dict[str, Any]]:
        import json

        log = self.home / "calls.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    def transcript(self, session: str) -> list[dict[str, Any]]:
        import json

        for path in (self.home / "projects").glob(f"*/{session}.jsonl"):
            return [json.loads(line) for line in path.read_text().splitlines()]
        return []


@pytest.fixture
def fake_claude(tmp_path: Any, settings: Any, monkeypatch: Any) -> FakeClaude:
    """MODEL_BACKEND=claude with the fake CLI first on PATH and a fixed working folder."""
    import os
    import sys

    from memory import model

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = Path(__file__).parent / "fake_claude" / "fake_claude.py"
    wrapper = bin_dir / "claude"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$@"\n')
    wrapper.chmod(0o755)
    fake = FakeClaude(tmp_path)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CLAUDE_HOME", str(fake.home))
    monkeypatch.setenv("FAKE_CLAUDE_SCRIPT", str(fake.script_path))
    settings.MODEL_BACKEND = "claude"
    settings.CLAUDE_BIN = "claude"
    settings.CLAUDE_WORKDIR = tmp_path / "think"
    model.backend.cache_clear()
    yield fake
    model.backend.cache_clear()


def decide_at(settings: Any, model: str, threshold: float) -> None:
    """Move one answer model's threshold (memory.decision) for a test that needs a list to
    count as an answer, or not, whatever the fitted threshold is today."""
    settings.ANSWER_MODELS = {
        **settings.ANSWER_MODELS,
        model: {**settings.ANSWER_MODELS[model], "threshold": threshold},
    }


def probe_p(api: Any, settings: Any, question: str, model: str = "meaning") -> float:
    """The probability the decision gives ``question`` at ``deep``, read with the model's
    threshold out of reach: nothing answers while it is read, so the relearning cycle keeps
    nothing and the next recall meets the memory as it was."""
    decide_at(settings, model, 1.01)
    return decision_p(
        api.recall(question, depth="deep", trace=True), 4 if model == "meaning" else 1
    )


def decision_p(answer: dict[str, Any], level: int = 4) -> float:
    """The probability the level's decision gave (from the answer's trace)."""
    for event in answer["trace"]:
        if event.get("level") == level and event.get("event") == "decision":
            return float(event["verdict"]["p"])
        if event.get("level") == level and event.get("event") == "notes" and event.get("decision"):
            return float(event["decision"]["p"])
    raise AssertionError(f"no level {level} decision in the trace")
