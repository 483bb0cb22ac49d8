"""A fake `claude` CLI that behaves as the owner's passport measured (§17–§18), driven by a script.

There is no model on these machines, so the tests put this first on PATH as `claude`. It is a
scripted model, not a mock of our code: it parses the real command line, keeps each thread as a
transcript file in a folder named after its working directory (so threads are bound to the
folder, as the real CLI's are), returns the same session_id on --resume, fails on an unknown id
exactly as measured (exit 1, empty stdout, "No conversation found with session ID: …" on
stderr), and makes its scripted tool calls through the MCP servers named in --mcp-config — this
project's real server — speaking the MCP protocol over stdio, as the CLI does.

Environment:
  FAKE_CLAUDE_HOME    where transcripts and the call log live (like ~/.claude)
  FAKE_CLAUDE_SCRIPT  a JSON file: {"rules": [rule, …]}; the first rule whose "match" regex is
                      found in the prompt (and "system_match" in the system prompt) decides:
                        "tools":  [{"name", "arguments"}, …] called in order (a built-in
                                  tool's name: run unless --disallowedTools names it)
                        "result": text, or a list used in turn (by how often this rule already
                                  answered in this thread); placeholders <<previous_prompt>>,
                                  <<previous_result>>, <<turns>>, <<tool_results>>
                        "exit", "stderr": fail like a crashing CLI; "sleep": seconds to hang
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

KNOWN_VALUE_FLAGS = {
    "-p",
    "--print",
    "--system-prompt",
    "--model",
    "--output-format",
    "--resume",
    "--mcp-config",
    "--allowedTools",
    "--disallowedTools",
    "--max-turns",
}
# Claude Code's own tools. A scripted call to one is answered as the real CLI runs it (the fake
# cannot fetch the web, so it says it would have) unless --disallowedTools names it: then it is
# refused, as the real CLI refuses a denied tool.
BUILTIN_TOOLS = {"Bash", "Read", "Write", "Edit", "Glob", "Grep", "WebFetch", "WebSearch", "Task"}
KNOWN_BARE_FLAGS = {"--strict-mcp-config", "--verbose"}


def fail(code: int, message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.exit(code)


def parse_args(argv: list[str]) -> dict[str, Any]:
    args: dict[str, Any] = {}
    i = 0
    while i < len(argv):
        flag = argv[i]
        if flag in KNOWN_VALUE_FLAGS:
            if i + 1 >= len(argv):
                fail(1, f"error: option '{flag}' argument missing")
            args[flag.lstrip("-")] = argv[i + 1]
            i += 2
        elif flag in KNOWN_BARE_FLAGS:
            args[flag.lstrip("-")] = True
            i += 1
        else:
            fail(1, f"error: unknown option '{flag}'")
    if "print" in args:
        args["p"] = args.pop("print")
    if "p" not in args:
        fail(1, "error: this fake only runs in print mode (-p)")
    return args


def home() -> Path:
    return Path(os.environ.get("FAKE_CLAUDE_HOME", Path.home() / ".claude"))


def project_dir() -> Path:
    return home() / "projects" / re.sub(r"[^A-Za-z0-9]", "-", os.getcwd())


def load_transcript(session: str) -> list[dict[str, Any]]:
    path = project_dir() / f"{session}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def pick_rule(prompt: str, system: str) -> tuple[int, dict[str, Any]]:
    script_path = os.environ.get("FAKE_CLAUDE_SCRIPT")
    rules = json.loads(Path(script_path).read_text())["rules"] if script_path else []
    for index, rule in enumerate(rules):
        if not re.search(rule.get("match", ""), prompt, re.S | re.I):
            continue
        if rule.get("system_match") and not re.search(rule["system_match"], system, re.S | re.I):
            continue
        return index, rule
    return -1, {"result": "{}"}


# What an MCP client speaks to a stdio server (the protocol, not an SDK): one JSON-RPC message a
# line each way, the initialize handshake first. Claude Code is no Python program, so the fake
# speaks the protocol itself rather than through the Python SDK's client, whose import alone
# took 0.7 s of processor time on every model call that used a tool; tests/agent/
# test_mcp_server.py holds the server to the SDK's own client.
PROTOCOL_VERSION = "2025-11-25"
# The environment a stdio server inherits besides its config's own "env": the MCP SDKs' list.
INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")


class StdioServer:
    """One MCP server started from an --mcp-config entry, initialized, asked by requests."""

    def __init__(self, spec: dict[str, Any]) -> None:
        env = {k: os.environ[k] for k in INHERITED_ENV if k in os.environ}
        env.update(spec.get("env") or {})
        self.proc = subprocess.Popen(
            [spec["command"], *spec.get("args", [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            encoding="utf-8",
            start_new_session=True,
        )
        self.next_id = 0
        self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "fake-claude", "version": "0"},
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line) if line.strip() else {}
            if "method" in message or message.get("id") != self.next_id:
                continue  # the server's notifications (it asks this client nothing)
            if "error" in message:
                raise RuntimeError(f"{method}: {message['error']}")
            return message["result"]
        raise RuntimeError(f"{method}: the MCP server closed its output (exit {self.proc.wait()})")

    def tools(self) -> list[str]:
        return [tool["name"] for tool in self.request("tools/list", {})["tools"]]

    def close(self) -> None:
        """As the SDKs stop a stdio server: its input closed, then SIGTERM, then SIGKILL."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        for stop in (None, self.proc.terminate, self.proc.kill):
            if stop is not None:
                stop()
            try:
                self.proc.wait(timeout=2)
                return
            except subprocess.TimeoutExpired:
                continue


def call_tools(
    config_path: str | None,
    allowed: list[str],
    calls: list[dict[str, Any]],
    disallowed: list[str] | None = None,
) -> list[dict[str, Any]]:
    if not calls:
        return []
    builtin = [c for c in calls if c["name"] in BUILTIN_TOOLS]
    if builtin:
        return [
            {"name": c["name"], "error": "tool not available: disallowed"}
            if c["name"] in (disallowed or [])
            else {"name": c["name"], "result": f"the real CLI would have run {c['name']}"}
            for c in builtin
        ] + call_tools(config_path, allowed, [c for c in calls if c["name"] not in BUILTIN_TOOLS])
    servers = json.loads(Path(config_path).read_text()).get("mcpServers", {}) if config_path else {}
    results: list[dict[str, Any]] = []
    clients: dict[str, StdioServer] = {}
    try:
        offered: dict[str, tuple[str, StdioServer]] = {}
        for server_name, spec in servers.items():
            clients[server_name] = StdioServer(spec)
            for tool in clients[server_name].tools():
                offered[f"mcp__{server_name}__{tool}"] = (tool, clients[server_name])
        for call in calls:
            full = next((k for k in offered if k.endswith(f"__{call['name']}")), None)
            if full is None or full not in allowed:
                results.append({"name": call["name"], "error": "tool not available"})
                continue
            name, client = offered[full]
            answer = client.request(
                "tools/call", {"name": name, "arguments": call.get("arguments", {})}
            )
            text = "".join(c.get("text", "") for c in answer.get("content", []))
            results.append(
                {"name": call["name"], "is_error": bool(answer.get("isError")), "content": text}
            )
    finally:
        for client in clients.values():
            client.close()
    return results


def fill(template: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        template = template.replace(f"<<{key}>>", value)
    return template


def main() -> None:
    started = time.monotonic()
    args = parse_args(sys.argv[1:])
    prompt, system = args["p"], args.get("system-prompt", "")
    home().mkdir(parents=True, exist_ok=True)
    with (home() / "calls.jsonl").open("a") as log:
        log.write(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd()}, ensure_ascii=False) + "\n")

    session = args.get("resume")
    history: list[dict[str, Any]] = []
    if session:
        history = load_transcript(session)
        if not history:
            fail(1, f"No conversation found with session ID: {session}")
    else:
        session = str(uuid.uuid4())

    index, rule = pick_rule(prompt, system)
    if rule.get("sleep"):
        time.sleep(float(rule["sleep"]))
    if "exit" in rule:
        fail(int(rule["exit"]), rule.get("stderr", "fake failure"))

    allowed = [t for t in (args.get("allowedTools") or "").split(",") if t]
    disallowed = [t for t in (args.get("disallowedTools") or "").split(",") if t]
    tool_results = call_tools(args.get("mcp-config"), allowed, rule.get("tools", []), disallowed)

    result = rule.get("result", "")
    if isinstance(result, list):
        used = sum(1 for turn in history if turn.get("rule") == index)
        result = result[min(used, len(result) - 1)]
    previous = history[-1] if history else {}
    result = fill(
        result,
        {
            "previous_prompt": previous.get("prompt", ""),
            "previous_result": previous.get("result", ""),
            "turns": str(len(history)),
            "tool_results": json.dumps(tool_results, ensure_ascii=False),
        },
    )

    servers = []
    if args.get("mcp-config"):
        servers = sorted(json.loads(Path(args["mcp-config"]).read_text()).get("mcpServers", {}))
    turn = {
        "prompt": prompt,
        "system": system,
        "result": result,
        "rule": index,
        "model": args.get("model"),
        "mcp_servers": servers,
        "allowed_tools": allowed,
        "tool_results": tool_results,
    }
    project_dir().mkdir(parents=True, exist_ok=True)
    with (project_dir() / f"{session}.jsonl").open("a") as transcript:
        transcript.write(json.dumps(turn, ensure_ascii=False) + "\n")

    # Token counts stand in for real ones; what matters is their shape: a fresh thread creates
    # the cache, a resumed one reads its history from it (PASSPORT.md §12).
    past = len(system) + sum(len(t["prompt"]) + len(t["result"]) for t in history)
    created = len(system) // 4 if not history else len(prompt) // 4
    read = past // 4 if history else 0
    tokens_in, tokens_out = len(prompt) // 4 + 1, len(result) // 4 + 1
    cost = (tokens_in * 3 + tokens_out * 15 + created * 3.75 + read * 0.3) / 1_000_000
    envelope = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": int((time.monotonic() - started) * 1000),
        "num_turns": 1 + len(tool_results),
        "result": result,
        "session_id": session,
        "total_cost_usd": round(cost, 6),
        "usage": {
            "input_tokens": tokens_in,
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
            "output_tokens": tokens_out,
            "cache_creation": {
                "ephemeral_1h_input_tokens": created,
                "ephemeral_5m_input_tokens": 0,
            },
        },
    }
    sys.stdout.write(json.dumps(envelope, ensure_ascii=False))


if __name__ == "__main__":
    main()
