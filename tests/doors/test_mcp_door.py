"""The two verbs as an MCP door, driven by the official ``mcp`` client: over streamable HTTP at
``/mcp`` against the served stack (pytest-django's live server) with the memory key as Bearer,
and over stdio through ``manage.py memory_mcp_door``. The answers are the REST answers."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from memory.models import Architect
from tests.conftest import make_key

FACT = "У меня есть друг Дима"
REPO = Path(__file__).resolve().parents[2]


async def _over_http(url: str, key: str, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http, streamable_http_client(url, http_client=http) as streams:
        async with Client(_Streams(*streams)) as client:
            tools = await client.list_tools()
            results = [await client.call_tool(name, arguments) for name, arguments in calls]
            return tools, results


class _Streams:
    """The HTTP transport's streams as the client's Transport."""

    def __init__(self, read: Any, write: Any, *rest: Any) -> None:
        self.streams = (read, write)

    async def __aenter__(self) -> Any:
        return self.streams

    async def __aexit__(self, *exc: Any) -> None:
        return None


@pytest.mark.django_db(transaction=True)
def test_an_assistant_remembers_and_recalls_over_streamable_http(live_server):
    alice = Architect.objects.create(name="alice")
    key = make_key(alice, "deep")
    url = f"{live_server.url}/mcp"
    tools, (stored, found, refused) = asyncio.run(
        _over_http(
            url,
            key,
            [
                ("remember", {"text": FACT}),
                ("recall", {"text": "Кто мои друзья?"}),
                ("recall", {"text": "x", "depth": "bottomless"}),
            ],
        )
    )
    by_name = {t.name: t for t in tools.tools}
    assert set(by_name) == {"remember", "recall"}
    schema = by_name["recall"].input_schema
    assert "text" in schema["required"] and "depth" in schema["properties"]  # from the registry
    assert "deny" in by_name["remember"].input_schema["properties"]
    assert stored.is_error is False and stored.structured_content["verb"] == "remember"
    assert stored.structured_content["stored"]["note"]
    answer = found.structured_content
    assert answer["verb"] == "recall" and answer["answer"]["found"] is True
    assert "Дима" in answer["answer"]["text"] and answer["depth_used"] == 1
    assert refused.structured_content["params"]["depth"]["fate"] == "bad_form"  # the same fates


@pytest.mark.django_db(transaction=True)
def test_the_http_door_needs_a_key_and_serves_only_its_architect(live_server):
    import httpx

    alice, bob = (Architect.objects.create(name=n) for n in ("alice", "bob"))
    url = f"{live_server.url}/mcp"
    bare = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert bare.status_code == 401 and bare.json()["error"]["code"] == "no_key"
    asyncio.run(_over_http(url, make_key(alice), [("remember", {"text": FACT})]))
    _, (theirs,) = asyncio.run(
        _over_http(url, make_key(bob), [("recall", {"text": "Кто мои друзья?"})])
    )
    assert theirs.structured_content["answer"]["found"] is False  # bob never told it


@pytest.mark.django_db(transaction=True)
def test_an_assistant_starts_the_door_as_a_command_over_stdio(live_server, settings):
    # The command is another process: it gets this run's database and data folder as every
    # child the memory starts does (mcp_config.child_env), and reaches the embedded stores
    # through the live server's internal door.
    from memory.agent.mcp_config import child_env

    settings.MEMORY_INTERNAL_URL = live_server.url
    alice = Architect.objects.create(name="alice")
    key = make_key(alice)
    env = {**os.environ, **child_env(), "MEMORY_KEY": key}
    params = StdioServerParameters(
        command=sys.executable, args=[str(REPO / "manage.py"), "memory_mcp_door"], env=env
    )

    async def session() -> Any:
        async with Client(params) as client:
            stored = await client.call_tool("remember", {"text": FACT})
            found = await client.call_tool("recall", {"text": "Кто мои друзья?"})
            return stored, found

    stored, found = asyncio.run(session())
    assert stored.structured_content["verb"] == "remember"
    assert "Дима" in found.structured_content["answer"]["text"]
