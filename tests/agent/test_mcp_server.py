"""This project's MCP server, spoken to by a real MCP client over stdio."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from memory.agent import mcp_config, tools
from memory.model.base import ToolGrant
from memory.models import Architect, MemoryObject, Run, ShapeEntry, ToolCall
from memory.shape.tools import promote_to_list
from memory.stores.graph import Chunk, Entity, Relation, graph

pytestmark = [pytest.mark.usefixtures("grown"), pytest.mark.slow]


def _session(scope: ToolGrant):
    params = mcp_config.server_params(scope)
    return Client(
        StdioServerParameters(command=params["command"], args=params["args"], env=params["env"])
    )


async def _exercise(scope: ToolGrant) -> tuple[list, dict]:
    async with _session(scope) as client:
        listed = (await client.list_tools()).tools
        results = {}
        calls = [
            ("make_new_kind", {"kind": "любимый цвет", "value": "синий", "basis": "сказал"}),
            ("write_value", {"kind": "любимый цвет", "value": "зелёный", "claim": "stated"}),
            (
                "promote_to_list",
                {
                    "kind": "друзья",
                    "items": [{"value": "Дима"}, {"value": "Миша", "fields": {"город": "Тула"}}],
                },
            ),
            ("read_catalog", {}),
            ("read_table", {"table": "друзья"}),
            ("read_table", {"table": "root"}),
            ("ask_graph", {"question": "Где служил Денис?"}),
            (
                "keep_object",
                {"name": "отчёт", "media_type": "text/markdown", "content": "# x", "summary": "s"},
            ),
            ("write_value", {"kind": "рост", "value": "180"}),
            ("find_notes", {"words": "Денис Кремль"}),
        ]
        for i, (name, arguments) in enumerate(calls):
            answer = await client.call_tool(name, arguments)
            text = "".join(getattr(c, "text", "") for c in answer.content)
            results[f"{i}:{name}"] = (answer.is_error, text)
        return listed, results


def test_it_lists_every_tool_and_each_one_answers_through_a_real_client(live_server, settings):
    # The server process does not own the embedded stores: it reads the graph through the door
    # of the owner (the live server in this process).
    settings.MEMORY_INTERNAL_URL = live_server.url
    alice = Architect.objects.create(name="alice")
    chunk = Chunk(id="note-1", content="Мой друг Денис служил в Кремле с 1992 по 1994 год.")
    graph().insert(
        architect_id=alice.pk,
        chunks=[chunk],
        entities=[
            Entity("Денис", "person", source=chunk.id),
            Entity("Кремль", "place", source=chunk.id),
        ],
        relations=[Relation("Денис", "Кремль", "служил с 1992 по 1994", "служба", chunk.id)],
    )
    run = Run.objects.create(architect=alice, verb="remember", caller="t", channel="api")
    scope = ToolGrant(
        architect_id=alice.pk, run_id=str(run.pk), tools=tuple(t.name for t in tools.TOOLS)
    )
    listed, results = asyncio.run(_exercise(scope))

    assert sorted(t.name for t in listed) == sorted(t.name for t in tools.TOOLS)
    for tool in listed:
        assert tool.description  # occasion and cost
        assert "architect" not in json.dumps(tool.input_schema)  # the tenant is not an argument

    ok = {k: v for k, v in results.items() if not v[0]}
    assert set(ok) == {
        "0:make_new_kind",
        "1:write_value",
        "2:promote_to_list",
        "3:read_catalog",
        "4:read_table",
        "5:read_table",
        "6:ask_graph",
        "7:keep_object",
        "9:find_notes",
    }
    rows = json.loads(results["4:read_table"][1])["rows"]
    assert [(r["value"], r["fields"].get("город", {}).get("value")) for r in rows] == [
        ("Дима", None),
        ("Миша", "Тула"),
    ]
    assert json.loads(results["5:read_table"][1])["values"]["любимый цвет"]["value"] == "зелёный"
    graph_answer = json.loads(results["6:ask_graph"][1])
    assert graph_answer["found"] is True
    assert "Денис" in {e["name"] for e in graph_answer["context"]["entities"]}
    kept = json.loads(results["7:keep_object"][1])
    assert MemoryObject.objects.get(pk=kept["object"]).architect == alice
    assert "make_new_kind creates one" in results["8:write_value"][1]

    # Every call is a fact of the run, written by the tool itself — refusals included.
    recorded = list(ToolCall.objects.filter(run=run).values_list("tool", "error"))
    assert [t for t, _ in recorded] == [c.split(":")[1] for c in results]
    assert [bool(e) for _, e in recorded] == [False] * 8 + [True, False]
    assert json.loads(results["9:find_notes"][1]) == {"notes": []}  # the graph's chunk is no note
    assert (
        ShapeEntry.objects.filter(architect=alice).count() == 3
    )  # colour, friends, город; no рост


def test_a_server_acts_only_in_its_own_architects_tenant():
    alice = Architect.objects.create(name="alice")
    bob = Architect.objects.create(name="bob")
    promote_to_list(architect=alice, kind="друзья", items=["Дима"])
    scope = ToolGrant(architect_id=bob.pk, run_id="", tools=("read_table", "read_catalog"))

    async def look() -> tuple[bool, str, str]:
        async with _session(scope) as client:
            table = await client.call_tool("read_table", {"table": "друзья"})
            catalog = await client.call_tool("read_catalog", {})
            return (
                table.is_error,
                "".join(c.text for c in table.content),
                "".join(c.text for c in catalog.content),
            )

    is_error, table, catalog = asyncio.run(look())
    assert is_error and "there is no table «друзья»" in table
    assert "druzya" not in catalog


def test_the_server_offers_only_the_tools_it_is_given():
    alice = Architect.objects.create(name="alice")
    scope = ToolGrant(architect_id=alice.pk, run_id="", tools=("read_catalog",))

    async def listing() -> list[str]:
        async with _session(scope) as client:
            return [t.name for t in (await client.list_tools()).tools]

    assert asyncio.run(listing()) == ["read_catalog"]


def test_the_command_refuses_an_unknown_architect():
    import subprocess

    params = mcp_config.server_params(
        ToolGrant(architect_id=999999, run_id="", tools=("read_catalog",))
    )
    done = subprocess.run(
        [params["command"], *params["args"]],
        env={**params["env"], "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0
    assert "no architect 999999" in done.stderr
    assert sys.executable == params["command"]


def test_the_command_started_for_each_model_call_runs_no_system_checks(monkeypatch, capsys):
    """The model starts the server once per call; Django's checks (importing every view) ran
    when the service started, so the command, run as its process runs it, goes straight to its
    work."""
    from django.core.management import execute_from_command_line

    def checks_run(*args, **kwargs):
        raise AssertionError("the system checks ran")

    monkeypatch.setattr("django.core.management.base.checks.run_checks", checks_run)
    with pytest.raises(SystemExit):
        execute_from_command_line(["manage.py", "memory_mcp", "--architect", "999999"])
    assert "no architect 999999" in capsys.readouterr().err
