"""This project's MCP server: the agent's tools over stdio, for one architect and one run."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from memory.agent import tools


def _served(tool: tools.AgentTool) -> Any:
    @functools.wraps(tool.fn)
    def handler(**arguments: Any) -> dict[str, Any]:
        try:
            return tools.call(tool.name, arguments)
        except tools.ToolRefused as refusal:
            raise ToolError(str(refusal)) from refusal

    return handler


def build(names: Sequence[str]) -> MCPServer:
    """A server exposing exactly ``names`` (the caller's list, never "all there are")."""
    unknown = sorted(set(names) - set(tools.BY_NAME))
    if unknown:
        raise ValueError(f"unknown tools: {', '.join(unknown)}")
    server = MCPServer("memory", instructions="Инструменты памяти архитектора.")
    for name in names:
        tool = tools.BY_NAME[name]
        server.add_tool(_served(tool), name=tool.name, description=tool.description)
    return server
