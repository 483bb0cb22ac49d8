"""Pytest fixtures `lightrag_server` and `lightrag_server_factory` for a real lightrag-server.

Load them with `-p tests.lightrag_server.fixtures`, or from tests/conftest.py with
`pytest_plugins = ["tests.lightrag_server.fixtures"]` or
`from tests.lightrag_server.fixtures import *  # noqa: F403`.

Both fixtures skip when `make lightrag-server` has not been run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lightrag_server.harness import LightRagServer, installed

__all__ = ["lightrag_server_factory_fixture", "lightrag_server_fixture"]

NOT_INSTALLED = "real lightrag-server not installed: run make lightrag-server"


# Fixture functions carry a _fixture suffix and the fixture name is given explicitly, so a test
# module can import them without its test arguments shadowing the import (ruff F811).
@pytest.fixture(name="lightrag_server_factory")
def lightrag_server_factory_fixture(tmp_path: Path) -> Iterator[Callable[..., LightRagServer]]:
    """Start any number of servers (each with its own stub and data); all closed after the test."""
    if not installed():
        pytest.skip(NOT_INSTALLED)
    servers: list[LightRagServer] = []

    def make(**kwargs: Any) -> LightRagServer:
        root = tmp_path / f"lightrag-{len(servers)}"
        root.mkdir()
        server = LightRagServer(root, **kwargs)
        servers.append(server)
        return server

    try:
        yield make
    finally:
        for server in servers:
            server.close()


@pytest.fixture(name="lightrag_server")
def lightrag_server_fixture(
    lightrag_server_factory: Callable[..., LightRagServer],
) -> LightRagServer:
    """A running lightrag-server on 127.0.0.1 with an empty default workspace."""
    return lightrag_server_factory()
