"""Serve the two verbs (remember, recall) over MCP stdio for one memory key.

For an assistant that starts its MCP servers as commands (Claude Code, Cursor): the key is read
from the environment variable ``--key-env`` names (MEMORY_KEY by default), never from the command
line, where other users of the machine could read it. Over HTTP the same door is ``/mcp``.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
from django.core.management.base import BaseCommand, CommandError, CommandParser
from mcp.server.stdio import stdio_server

from memory.api import mcp
from memory.auth import caller_for_key
from memory.models import ApiKey


class Command(BaseCommand):
    help = "Serve remember and recall over MCP stdio for the memory key in $MEMORY_KEY."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--key-env", default="MEMORY_KEY", help="the environment variable holding the key"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        token = os.environ.get(options["key_env"], "").strip()
        if not token:
            raise CommandError(f"no memory key: set {options['key_env']}")
        key = ApiKey.find(token)
        if key is None:
            raise CommandError(f"the key in {options['key_env']} is not a valid memory key")
        mcp.bind_process(caller_for_key(key))
        server = mcp.server()

        async def serve() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(serve)
