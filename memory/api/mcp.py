"""The two verbs as an MCP door, for assistants that speak MCP (Claude Code, Cursor, …).

``remember`` and ``recall`` are its two tools: their input schemas are the contract's request
schemas as the OpenAPI publishes them (generated from the parameter registry), and a call gives
exactly the answer ``POST /api/v1/<verb>`` gives, as JSON. Served two ways:

- streamable HTTP at ``/mcp``, the memory key as ``Authorization: Bearer`` (stateless, JSON
  responses: each POST is one MCP exchange; no server-side session to lose);
- stdio, through ``manage.py memory_mcp_door`` given a key (the process serves that key's caller).

The MCP library (``mcp``) speaks the protocol; this module only says what the tools are and who
calls them. A refusal of the contract (a bad parameter, a wrong key) comes back as the tool's
error with the one error body.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from typing import Any

import mcp_types as types
from asgiref.sync import async_to_sync, sync_to_async
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from memory.api import schema
from memory.auth import Caller, caller_for_key
from memory.contract.errors import error_body, json_error
from memory.contract.version import CONTRACT_VERSION
from memory.errors import MemoryServiceError
from memory.models import ApiKey
from memory.services.recall import recall
from memory.services.remember import remember

VERBS = {"remember": remember, "recall": recall}
_SCHEMAS = {"remember": "RememberRequest", "recall": "RecallRequest"}
_DESCRIPTIONS = {
    "remember": "Remember: add to the memory. Give the phrase as `text`; the answer says what was "
    "stored and the fate of every parameter sent.",
    "recall": "Recall: retrieve from the memory. Ask in plain text (`text`); `depth` standard, deep "
    "or extreme. The answer is written for a model: found or not, the kind, what it rests on.",
}

# The caller of a stdio door: one key for the whole process (memory_mcp_door binds it).
_process_caller: Caller | None = None


def bind_process(caller: Caller) -> None:
    global _process_caller
    _process_caller = caller


@lru_cache(maxsize=1)
def _components() -> dict[str, Any]:
    """The contract's published OpenAPI components (drf-spectacular, from the registry)."""
    return schema.components()


def input_schema(verb: str) -> dict[str, Any]:
    """A verb's request schema as a self-contained JSON Schema: the OpenAPI component, its
    references moved under ``$defs``."""
    components = _components()
    schema = copy.deepcopy(components[_SCHEMAS[verb]])
    needed: dict[str, Any] = {}

    def relink(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
                name = ref.rsplit("/", 1)[1]
                if name not in needed:
                    needed[name] = {}
                    needed[name] = relink(copy.deepcopy(components[name]))
                return {**node, "$ref": f"#/$defs/{name}"}
            return {key: relink(value) for key, value in node.items()}
        if isinstance(node, list):
            return [relink(item) for item in node]
        return node

    schema = relink(schema)
    if needed:
        schema["$defs"] = needed
    return schema


async def _list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    schemas = await sync_to_async(lambda: {v: input_schema(v) for v in VERBS})()
    return types.ListToolsResult(
        tools=[
            types.Tool(name=verb, description=_DESCRIPTIONS[verb], input_schema=schemas[verb])
            for verb in VERBS
        ]
    )


def _key_of(request: Any) -> str:
    header = request.headers.get("authorization", "") if request is not None else ""
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme == "Bearer" else ""


def _caller(request: Any) -> Caller | None:
    """The stdio process's caller, or the one the HTTP request's memory key names."""
    if request is None:
        return _process_caller
    key = ApiKey.find(_key_of(request))
    return caller_for_key(key) if key is not None else None


def _call(request: Any, verb: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """(the answer or the error body, whether it is an error): what the HTTP door would give."""
    caller = _caller(request)
    if caller is None:
        return error_body("bad_key", "this memory key is not valid"), True
    try:
        return VERBS[verb](caller=caller, data=arguments), False
    except MemoryServiceError as error:
        return error_body(error.code, error.message, retryable=error.retryable), True


async def _call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name not in VERBS:
        answer, failed = error_body("unknown_tool", f"no tool {params.name!r}"), True
    else:
        # The verbs are Django code (the ORM is synchronous): run in the thread Django serves
        # this request in, so the request's database connection is the one they use.
        answer, failed = await sync_to_async(_call, thread_sensitive=True)(
            getattr(ctx, "request", None), params.name, dict(params.arguments or {})
        )
    text = json.dumps(answer, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=answer,
        is_error=failed,
    )


def server() -> Server[Any]:
    return Server(
        "memory",
        version=CONTRACT_VERSION,
        instructions="The long-term memory: two verbs, remember and recall.",
        on_list_tools=_list_tools,
        on_call_tool=_call_tool,
    )


# --- streamable HTTP at /mcp, inside Django ------------------------------------------------------


async def _exchange(scope: dict[str, Any], body: bytes) -> tuple[int, list[Any], bytes]:
    """One stateless MCP exchange through the library's own transport."""
    manager = StreamableHTTPSessionManager(
        app=server(),
        json_response=True,
        stateless=True,
        # Django has already checked the Host (ALLOWED_HOSTS and the ports): not twice.
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    sent = {"status": 500, "headers": [], "body": b""}
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            sent["status"], sent["headers"] = message["status"], message.get("headers", [])
        elif message["type"] == "http.response.body":
            sent["body"] += message.get("body", b"")

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return sent["status"], sent["headers"], sent["body"]


@csrf_exempt
def door(request: HttpRequest) -> HttpResponse:
    """``/mcp``: a memory key first (401 in the one error shape without one), then the exchange."""
    if ApiKey.find(_key_of(request)) is None:
        response = json_error(401, "no_key", "use 'Authorization: Bearer <memory key>'")
        response["WWW-Authenticate"] = 'Bearer realm="memory"'
        return response
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in request.headers.items()
        ],
        "server": (request.get_host().rsplit(":", 1)[0], int(request.get_port())),
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
    }
    status, headers, body = async_to_sync(_exchange)(scope, request.body)
    response = HttpResponse(body, status=status)
    for name, value in headers:
        if name.lower() not in (b"content-length",):
            response[name.decode("latin-1")] = value.decode("latin-1")
    return response
