"""The HTTP backends against a local stub speaking each API's wire format.

The Anthropic API and an OpenAI-compatible server cannot run here (no network, no model), so a
stub on 127.0.0.1 answers with scripted replies and logs every request; the backend, httpx,
the tool loop, the tools and the database are real.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from memory.model.base import ModelError, ThreadNotFound, ToolGrant
from memory.model.http import AnthropicMessages, OpenAIChat
from memory.models import Architect, Run, Thread, ToolCall
from memory.shape.tools import promote_to_list

pytestmark = pytest.mark.usefixtures("grown")


class Stub:
    def __init__(self, replies: list[Any]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body}
                )
                status, reply = stub.replies.pop(0)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture
def team():
    alice = Architect.objects.create(name="alice")
    promote_to_list(
        architect=alice,
        kind="команда",
        items=[{"value": "Юля", "fields": {"роль": "продакт-менеджер"}}],
    )
    run = Run.objects.create(architect=alice, verb="recall", caller="t", channel="api")
    return alice, run


def test_anthropic_runs_the_tool_loop_in_the_callers_tenant(team):
    alice, run = team
    stub = Stub(
        [
            (
                200,
                {
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "t1",
                            "name": "read_table",
                            "input": {"table": "команда"},
                        }
                    ],
                    "stop_reason": "tool_use",
                    "usage": {
                        "input_tokens": 100,
                        "output_tokens": 10,
                        "cache_creation_input_tokens": 80,
                    },
                },
            ),
            (
                200,
                {
                    "content": [{"type": "text", "text": "Юля — продакт-менеджер."}],
                    "stop_reason": "end_turn",
                    "usage": {
                        "input_tokens": 120,
                        "output_tokens": 12,
                        "cache_read_input_tokens": 80,
                    },
                },
            ),
            (
                200,
                {
                    "content": [{"type": "text", "text": "Ты спрашивал про команду."}],
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 30, "output_tokens": 8},
                },
            ),
        ]
    )
    backend = AnthropicMessages(base_url=stub.url, api_key="sk-test", model="claude-test")
    scope = ToolGrant(
        architect_id=alice.pk, run_id=str(run.pk), tools=("read_catalog", "read_table")
    )
    try:
        result = backend.run(
            prompt="Кто в команде?", system="Ты — память.", tools=scope, thread=None, timeout=10
        )
        follow = backend.run(
            prompt="О чём я спрашивал?",
            system="Ты — память.",
            tools=None,
            thread=result.thread,
            timeout=10,
        )
    finally:
        stub.close()
    assert result.text == "Юля — продакт-менеджер."
    assert (
        result.turns,
        result.tokens_in,
        result.cache_creation_tokens,
        result.cache_read_tokens,
    ) == (2, 220, 80, 80)
    first, second, third = (r["body"] for r in stub.requests)
    assert stub.requests[0]["path"] == "/v1/messages"
    assert stub.requests[0]["headers"]["x-api-key"] == "sk-test"
    assert [t["name"] for t in first["tools"]] == ["read_catalog", "read_table"]
    assert "properties" in first["tools"][1]["input_schema"]  # the schema comes from the server
    tool_result = second["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result" and tool_result["is_error"] is False
    assert "продакт-менеджер" in tool_result["content"]
    assert ToolCall.objects.get(run=run).tool == "read_table"
    # The thread continues with the whole conversation, kept by the memory.
    assert follow.thread == result.thread
    assert [m["role"] for m in third["messages"]] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert Thread.objects.get(pk=result.thread).backend == "anthropic"


def test_openai_compatible_servers_get_function_calls(team):
    alice, run = team
    stub = Stub(
        [
            (
                200,
                {
                    "choices": [
                        {
                            "message": {
                                "role": "assistant",
                                "content": None,
                                "tool_calls": [
                                    {
                                        "id": "c1",
                                        "type": "function",
                                        "function": {
                                            "name": "read_table",
                                            "arguments": json.dumps({"table": "чужая"}),
                                        },
                                    }
                                ],
                            }
                        }
                    ],
                    "usage": {"prompt_tokens": 50, "completion_tokens": 5},
                },
            ),
            (
                200,
                {
                    "choices": [
                        {"message": {"role": "assistant", "content": "Такой таблицы нет."}}
                    ],
                    "usage": {
                        "prompt_tokens": 60,
                        "completion_tokens": 6,
                        "prompt_tokens_details": {"cached_tokens": 40},
                    },
                },
            ),
        ]
    )
    backend = OpenAIChat(base_url=stub.url + "/v1", api_key="", model="local")
    scope = ToolGrant(architect_id=alice.pk, run_id=str(run.pk), tools=("read_table",))
    try:
        result = backend.run(
            prompt="Что в таблице чужая?",
            system="Ты — память.",
            tools=scope,
            thread=None,
            timeout=10,
        )
    finally:
        stub.close()
    assert result.text == "Такой таблицы нет."
    assert result.cache_read_tokens == 40
    first, second = (r["body"] for r in stub.requests)
    assert stub.requests[0]["path"] == "/v1/chat/completions"
    assert first["messages"][0] == {"role": "system", "content": "Ты — память."}
    assert first["tools"][0]["function"]["name"] == "read_table"
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool" and "there is no table" in tool_message["content"]
    assert ToolCall.objects.get(run=run).error


def test_http_failures_are_named(team):
    alice, _ = team
    scope = ToolGrant(architect_id=alice.pk, run_id="", tools=())
    stub = Stub([(500, {"error": "overloaded"}), (401, {"error": "bad key"})])
    backend = AnthropicMessages(base_url=stub.url, api_key="x", model="m")
    try:
        with pytest.raises(ModelError) as server_error:
            backend.run(prompt="x", system="s", tools=scope, thread=None, timeout=5)
        with pytest.raises(ModelError) as key_error:
            backend.run(prompt="x", system="s", tools=scope, thread=None, timeout=5)
    finally:
        stub.close()
    assert server_error.value.retryable is True
    assert key_error.value.retryable is False
    with pytest.raises(ThreadNotFound):
        backend.run(prompt="x", system="s", tools=None, thread="nope", timeout=5)
    with pytest.raises(ModelError, match="needs the architect"):
        backend.run(prompt="x", system="s", tools=None, thread=None, timeout=5)
    unreachable = OpenAIChat(base_url="http://127.0.0.1:9/v1", api_key="", model="m")
    with pytest.raises(ModelError, match="cannot reach"):
        unreachable.run(prompt="x", system="s", tools=scope, thread=None, timeout=2)


def test_remember_through_the_anthropic_backend_writes_the_team(settings, alice_api):
    from memory import model

    parse = json.dumps(
        {"entities": [{"name": "Юля", "type": "person"}], "relations": []}, ensure_ascii=False
    )
    items = [{"value": "Юля", "fields": {"роль": "продакт-менеджер"}}]
    stub = Stub(
        [
            (200, {"content": [{"type": "text", "text": parse}], "usage": {}}),
            (
                200,
                {
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "t1",
                            "name": "promote_to_list",
                            "input": {"kind": "команда", "items": items},
                        }
                    ],
                    "usage": {},
                },
            ),
            (200, {"content": [{"type": "text", "text": "Записал."}], "usage": {}}),
        ]
    )
    settings.MODEL_BACKEND = "anthropic"
    settings.ANTHROPIC_BASE_URL = stub.url
    model.backend.cache_clear()
    try:
        answer = alice_api.remember("У меня в команде работает Юля — продакт-менеджер")
    finally:
        stub.close()
        model.backend.cache_clear()
    assert answer["model"]["status"] == "done"
    assert answer["model"]["backend"] == "anthropic"
    assert answer["tables_created"] == ["mem_komanda"]
    assert "tools" not in stub.requests[0]["body"]  # the phrase parse gets no tools
    offered = {t["name"] for t in stub.requests[1]["body"]["tools"]}
    # The remember turn is offered exactly the tools it may call: the memory's writes and the
    # catalog, never write_candidate, and nothing that is not the memory's (no web tool).
    assert offered == {
        "write_value",
        "make_new_kind",
        "promote_to_list",
        "keep_object",
        "read_catalog",
        "read_table",
    }
    assert Thread.objects.get(pk=answer["thread"]).architect.name == "alice"
