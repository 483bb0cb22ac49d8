"""HTTP model backends: the Anthropic Messages API and OpenAI-compatible servers (Ollama, vLLM,
llama.cpp server). The same agent tools are offered as function calls; the memory runs the tool
loop itself, in the caller's tenant. These APIs keep no conversation, so the memory keeps the
thread's messages in its ``Thread`` table.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from functools import lru_cache
from typing import Any

import httpx
from django.conf import settings

from memory import outgoing
from memory.agent import mcp_server
from memory.agent import tools as agent_tools
from memory.model.base import (
    ModelBadOutput,
    ModelError,
    ModelResult,
    ModelTimeout,
    ThreadNotFound,
    ToolGrant,
    failed_call,
)
from memory.models import Architect, Run, Thread
from memory.shadowing import in_shadow


@lru_cache(maxsize=32)
def tool_schemas(names: tuple[str, ...]) -> tuple[dict[str, Any], ...]:
    """Name, description and input schema of each tool, from the MCP server itself."""
    listed = asyncio.run(mcp_server.build(names).list_tools())
    return tuple(
        {"name": t.name, "description": t.description or "", "input_schema": t.input_schema}
        for t in listed
    )


class _HttpBackend:
    name = "http"
    configured = True
    workdir = ""

    def __init__(self, *, base_url: str, api_key: str, model: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.model = model

    # --- the wire -----------------------------------------------------------------------------

    def _post(self, path: str, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        try:
            response = outgoing.client().post(
                f"{self.base_url}{path}", json=body, headers=self._headers(), timeout=timeout
            )
        except httpx.TimeoutException as error:
            raise ModelTimeout(f"{self.name}: no answer within {timeout:.0f} s") from error
        except httpx.HTTPError as error:
            raise ModelError(f"{self.name}: cannot reach {self.base_url}: {error}") from error
        if response.status_code >= 400:
            raise ModelError(
                f"{self.name}: HTTP {response.status_code}: {response.text[:300]}",
                retryable=response.status_code >= 500 or response.status_code == 429,
            )
        try:
            return response.json()
        except ValueError as error:
            raise ModelBadOutput(f"{self.name}: the answer is not JSON") from error

    # --- the loop ------------------------------------------------------------------------------

    def run(
        self,
        *,
        prompt: str,
        system: str,
        tools: ToolGrant | None,
        thread: str | None,
        timeout: float,
    ) -> ModelResult:
        stored = None
        if thread:
            stored = Thread.objects.filter(pk=thread).first()
            if stored is None:
                raise ThreadNotFound(
                    f"{self.name}: no thread {thread!r}", details={"thread": thread}
                )
        architect_id = tools.architect_id if tools else _architect_of(stored)
        if architect_id is None:
            raise ModelError(f"{self.name}: a new thread needs the architect it belongs to")
        messages: list[dict[str, Any]] = list(stored.messages) if stored else []
        messages.append(self._user(prompt))
        names = tuple(tools.tools) if tools else ()
        offered = tool_schemas(names) if names else ()
        tenant = None
        if tools is not None and names:
            architect = Architect.objects.get(pk=tools.architect_id)
            run = Run.objects.filter(pk=tools.run_id).first()
            tenant = _tenant(architect, run)
        started = time.perf_counter()
        result = ModelResult(text="", thread=thread or uuid.uuid4().hex, turns=0)
        try:
            self._loop(result, system, messages, offered, tenant, timeout)
        except ModelError as error:
            # Every round already answered counts, and so does the one that failed.
            result.seconds = round(time.perf_counter() - started, 3)
            raise error.spent(
                result.add(failed_call()) if error.usage is None else result
            ) from None
        result.seconds = round(time.perf_counter() - started, 3)
        Thread.objects.update_or_create(
            pk=result.thread,
            defaults={"messages": messages},
            create_defaults={
                "messages": messages,
                # A shadow run's conversation is the backend's to repair, nobody's to continue:
                # no caller's thread check matches this backend name.
                "backend": f"{self.name}:shadow" if in_shadow() else self.name,
                "workdir": self.workdir,
                "architect_id": architect_id,
            },
        )
        return result

    def _loop(
        self,
        result: ModelResult,
        system: str,
        messages: list[dict[str, Any]],
        offered: Any,
        tenant: Any,
        timeout: float,
    ) -> None:
        for _ in range(settings.MODEL_MAX_TOOL_ROUNDS + 1):
            reply = self._post(self.path, self._body(system, messages, offered), timeout)
            text, calls, message, usage = self._read(reply)
            messages.append(message)
            result.turns += 1
            result.tokens_in += usage.get("in", 0)
            result.tokens_out += usage.get("out", 0)
            result.cache_read_tokens += usage.get("cache_read", 0)
            result.cache_creation_tokens += usage.get("cache_creation", 0)
            if not calls:
                result.text = text
                break
            if tenant is None:
                raise ModelBadOutput(f"{self.name}: the model called tools it was not given").spent(
                    ModelResult(text="", thread="", turns=0)
                )  # this round is counted
            messages.extend(self._tool_results([(c, _call_tool(tenant, c)) for c in calls]))
        else:
            raise ModelBadOutput(
                f"{self.name}: still calling tools after {settings.MODEL_MAX_TOOL_ROUNDS} rounds"
            ).spent(ModelResult(text="", thread="", turns=0))

    # --- per API -----------------------------------------------------------------------------
    path = ""

    def _headers(self) -> dict[str, str]:
        raise NotImplementedError

    def _user(self, text: str) -> dict[str, Any]:
        return {"role": "user", "content": text}

    def _body(
        self, system: str, messages: list[dict[str, Any]], offered: tuple[dict[str, Any], ...]
    ) -> dict[str, Any]:
        raise NotImplementedError

    def _read(
        self, reply: dict[str, Any]
    ) -> tuple[str, list[dict[str, Any]], dict[str, Any], dict[str, int]]:
        raise NotImplementedError

    def _tool_results(
        self, done: list[tuple[dict[str, Any], tuple[str, bool]]]
    ) -> list[dict[str, Any]]:
        raise NotImplementedError


def _architect_of(stored: Thread | None) -> int | None:
    return stored.architect_id if stored else None


def _tenant(architect: Architect, run: Run | None) -> agent_tools.Tenant:
    return agent_tools.Tenant(architect=architect, run=run)


def _call_tool(tenant: agent_tools.Tenant, call: dict[str, Any]) -> tuple[str, bool]:
    """Run one tool call in the caller's tenant; (content, is_error)."""
    with agent_tools.bound(tenant):
        try:
            result = agent_tools.call(call["name"], call["arguments"])
        except agent_tools.ToolRefused as refusal:
            return str(refusal), True
    return json.dumps(result, ensure_ascii=False), False


class AnthropicMessages(_HttpBackend):
    name = "anthropic"
    path = "/v1/messages"

    def _headers(self) -> dict[str, str]:
        return {"x-api-key": self.api_key, "anthropic-version": "2023-06-01"}

    def _body(self, system, messages, offered):  # type: ignore[no-untyped-def]
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": 4096,
            "system": system,
            "messages": messages,
        }
        if offered:
            body["tools"] = list(offered)
        return body

    def _read(self, reply):  # type: ignore[no-untyped-def]
        content = reply.get("content")
        if not isinstance(content, list):
            raise ModelBadOutput("anthropic: the reply has no content list")
        text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
        calls = [
            {"id": b["id"], "name": b["name"], "arguments": b.get("input") or {}}
            for b in content
            if b.get("type") == "tool_use"
        ]
        usage = reply.get("usage") or {}
        return (
            text,
            calls,
            {"role": "assistant", "content": content},
            {
                "in": usage.get("input_tokens", 0),
                "out": usage.get("output_tokens", 0),
                "cache_read": usage.get("cache_read_input_tokens", 0) or 0,
                "cache_creation": usage.get("cache_creation_input_tokens", 0) or 0,
            },
        )

    def _tool_results(self, done):  # type: ignore[no-untyped-def]
        return [
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": call["id"],
                        "content": content,
                        "is_error": error,
                    }
                    for call, (content, error) in done
                ],
            }
        ]


class OpenAIChat(_HttpBackend):
    name = "openai"
    path = "/chat/completions"

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def _body(self, system, messages, offered):  # type: ignore[no-untyped-def]
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, *messages],
        }
        if offered:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t["name"],
                        "description": t["description"],
                        "parameters": t["input_schema"],
                    },
                }
                for t in offered
            ]
        return body

    def _read(self, reply):  # type: ignore[no-untyped-def]
        try:
            message = reply["choices"][0]["message"]
        except (KeyError, IndexError, TypeError) as error:
            raise ModelBadOutput("openai: the reply has no choices[0].message") from error
        calls = []
        for call in message.get("tool_calls") or []:
            try:
                arguments = json.loads(call["function"].get("arguments") or "{}")
            except ValueError as error:
                raise ModelBadOutput("openai: tool arguments are not JSON") from error
            calls.append(
                {"id": call["id"], "name": call["function"]["name"], "arguments": arguments}
            )
        usage = reply.get("usage") or {}
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0) or 0
        return (
            message.get("content") or "",
            calls,
            {k: v for k, v in message.items() if k in ("role", "content", "tool_calls")},
            {
                "in": usage.get("prompt_tokens", 0),
                "out": usage.get("completion_tokens", 0),
                "cache_read": cached,
            },
        )

    def _tool_results(self, done):  # type: ignore[no-untyped-def]
        return [
            {"role": "tool", "tool_call_id": call["id"], "content": content}
            for call, (content, _) in done
        ]
