"""The production backend: the ``claude`` CLI in print mode.

    claude -p TEXT --system-prompt INSTRUCTION --model M --output-format json
           [--resume THREAD] --mcp-config FILE --strict-mcp-config
           --disallowedTools WebFetch,WebSearch,Bash [--allowedTools …]

The CLI runs in one fixed working folder: its transcripts (and so its threads) are bound to it.
The envelope gives ``session_id`` (our ``thread``), ``result``, ``usage`` with cache creation and
cache reads, ``total_cost_usd``, ``num_turns`` and ``is_error``. A resumed thread that the CLI
does not know fails with exit 1, an empty stdout and "No conversation found with session ID"
on stderr: that is ``ThreadNotFound``, not bad output.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from memory.agent import mcp_config
from memory.model.base import (
    ModelBadOutput,
    ModelError,
    ModelNotInstalled,
    ModelResult,
    ModelTimeout,
    ThreadNotFound,
    ToolGrant,
    failed_call,
)

NO_CONVERSATION = "No conversation found with session ID"
MCP_SERVER = "memory"
# The internet ban (PASSPORT.md, fork 10), said on every command line instead of resting on a
# default: Claude Code's own tools that reach the network (the web tools, and the shell, which can
# too) are refused by name; the memory's tools are the only ones allowed.
DISALLOWED_TOOLS = ("WebFetch", "WebSearch", "Bash")


class ClaudeCli:
    name = "claude"
    configured = True

    def __init__(self, *, binary: str, model: str, workdir: Path) -> None:
        self.binary = binary
        self.model = model
        self.workdir = str(workdir)

    def command(
        self, *, prompt: str, system: str, config: str, tools: ToolGrant | None, thread: str | None
    ) -> list[str]:
        args = [
            self.binary, "-p", prompt,
            "--system-prompt", system,
            "--model", self.model,
            "--output-format", "json",
        ]  # fmt: skip
        if thread:
            args += ["--resume", thread]
        args += ["--mcp-config", config, "--strict-mcp-config"]
        args += ["--disallowedTools", ",".join(DISALLOWED_TOOLS)]
        if tools and tools.tools:
            args += ["--allowedTools", ",".join(f"mcp__{MCP_SERVER}__{t}" for t in tools.tools)]
        return args

    def run(
        self,
        *,
        prompt: str,
        system: str,
        tools: ToolGrant | None,
        thread: str | None,
        timeout: float,
    ) -> ModelResult:
        binary = shutil.which(self.binary)
        if binary is None:
            raise ModelNotInstalled(
                f"the claude CLI {self.binary!r} is not installed or not on PATH (CLAUDE_BIN)"
            )
        Path(self.workdir).mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            "w", suffix=".json", prefix="memory-mcp-", delete=False
        ) as f:
            # No tools → an empty server list: with --strict-mcp-config that is zero servers.
            json.dump(mcp_config.config(tools, server_name=MCP_SERVER), f)
            config_path = f.name
        started = time.perf_counter()
        try:
            completed = subprocess.run(
                self.command(
                    prompt=prompt, system=system, config=config_path, tools=tools, thread=thread
                ),
                cwd=self.workdir,
                capture_output=True,
                text=True,
                timeout=timeout,
                env={**os.environ},
            )
        except subprocess.TimeoutExpired as error:
            raise ModelTimeout(f"the claude CLI did not answer within {timeout:.0f} s").spent(
                failed_call(timeout)
            ) from error
        finally:
            os.unlink(config_path)
        seconds = round(time.perf_counter() - started, 3)
        return parse_envelope(
            completed.returncode, completed.stdout, completed.stderr, thread, seconds
        )


def parse_envelope(
    code: int, stdout: str, stderr: str, thread: str | None, seconds: float
) -> ModelResult:
    if code != 0 and not stdout.strip():
        if NO_CONVERSATION in stderr:
            raise ThreadNotFound(
                f"the model has no thread {thread!r} in its working folder: {stderr.strip()}",
                details={"thread": thread},
            )
        raise ModelError(f"the claude CLI failed (exit {code}): {stderr.strip()[:500]}").spent(
            failed_call(seconds)
        )
    try:
        envelope: dict[str, Any] = json.loads(stdout)
    except ValueError as error:
        raise ModelBadOutput(f"the claude CLI printed no JSON envelope: {stdout[:200]!r}").spent(
            failed_call(seconds)
        ) from error
    if not isinstance(envelope, dict) or "session_id" not in envelope:
        raise ModelBadOutput("the claude CLI envelope has no session_id").spent(
            failed_call(seconds)
        )
    if envelope.get("is_error"):
        raise ModelError(f"the model reported an error: {str(envelope.get('result'))[:500]}").spent(
            _usage(envelope, seconds)
        )
    return _usage(envelope, seconds)


def _usage(envelope: dict[str, Any], seconds: float) -> ModelResult:
    usage = envelope.get("usage") or {}
    cost = envelope.get("total_cost_usd")
    return ModelResult(
        text=str(envelope.get("result") or ""),
        thread=str(envelope["session_id"]),
        turns=int(envelope.get("num_turns") or 1),
        tokens_in=int(usage.get("input_tokens") or 0),
        tokens_out=int(usage.get("output_tokens") or 0),
        cache_read_tokens=int(usage.get("cache_read_input_tokens") or 0),
        cache_creation_tokens=int(usage.get("cache_creation_input_tokens") or 0),
        cost_usd=Decimal(str(cost)) if cost is not None else None,
        seconds=seconds,
        raw=envelope,
    )
