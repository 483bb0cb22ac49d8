"""Serve the agent's tools over MCP (stdio) for one architect and one run.

The model process starts this from the config the memory writes for each call; the tenant and
the run are arguments of the command, so the model cannot act for anyone else.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.agent import mcp_server, tools
from memory.models import Architect, Run


class Command(BaseCommand):
    help = "Serve the memory agent's tools over MCP stdio for one architect."
    # The model starts this once per call: Django's system checks ran when memory_run started,
    # and would be paid again on every model call (0.07 s of a 1.66 s start, bench/mcp_start.py).
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--architect", type=int, required=True, help="architect id")
        parser.add_argument("--run", default="", help="run id the calls are recorded under")
        parser.add_argument(
            "--tools",
            default=",".join(t.name for t in tools.TOOLS),
            help="comma-separated tool names",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        architect = Architect.objects.filter(pk=options["architect"]).first()
        if architect is None:
            raise CommandError(f"no architect {options['architect']}")
        run = None
        if options["run"]:
            run = Run.objects.filter(pk=options["run"], architect=architect).first()
            if run is None:
                raise CommandError(f"no run {options['run']} of architect {architect.pk}")
        names = [n for n in options["tools"].split(",") if n]
        tools.bind_process(tools.Tenant(architect=architect, run=run))
        mcp_server.build(names).run("stdio")
