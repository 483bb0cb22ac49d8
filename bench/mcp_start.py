"""What a model call pays to start the agent's MCP server: the model (`claude -p`) starts
`manage.py memory_mcp` afresh for every call, so its start-up is part of every level-2 answer.

Starts the server as the model does (memory/agent/mcp_config.py), lists its tools and reads the
catalog, N times (the variants in turn); prints wall time to the first answer and the child's
processor time, beside two baselines measured in the same run: a bare interpreter, and the same
server with Django's system checks run before it serves, as it did before it left them to
memory_run.

    .venv/bin/python bench/mcp_start.py --starts 10
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, percentile, setup_django  # noqa: E402

# manage.py memory_mcp as it ran before: the command's system checks on (BaseCommand runs them
# before handle()); its arguments follow on the command line.
WITH_CHECKS = """
import os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory.settings")
import django
django.setup()
from django.core.management import execute_from_command_line
from memory.management.commands import memory_mcp
memory_mcp.Command.requires_system_checks = "__all__"
execute_from_command_line(["manage.py", *sys.argv[1:]])
"""


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(runs: dict[str, Any], starts: int) -> dict[str, tuple[list[float], float]]:
    """Each run ``starts`` times, taken in turn (the order turned each round, so a machine that
    speeds up or slows down meets them alike): wall seconds each, and processor seconds a start
    of the child processes."""
    walls: dict[str, list[float]] = {name: [] for name in runs}
    cpu = dict.fromkeys(runs, 0.0)
    names = list(runs)
    for round_ in range(starts):
        for name in names if round_ % 2 == 0 else reversed(names):
            before, started = _child_cpu(), time.perf_counter()
            runs[name]()
            walls[name].append(time.perf_counter() - started)
            cpu[name] += _child_cpu() - before
    return {name: (walls[name], cpu[name] / starts) for name in runs}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=10, help="server starts (default 10)")
    args = parser.parse_args(argv)
    setup_django("mcp")
    from django.core.management import call_command
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from memory.agent import mcp_config
    from memory.model.base import ToolGrant
    from memory.models import Architect

    call_command("migrate", verbosity=0)
    architect = Architect.objects.create(name="mcp-start")
    params = mcp_config.server_params(
        ToolGrant(architect_id=architect.pk, run_id="", tools=("read_catalog", "read_table"))
    )

    async def one_call(checked: bool) -> None:
        command, args_ = params["command"], params["args"]
        if checked:  # the command with its checks back on, started the same way
            args_ = ["-c", WITH_CHECKS, *args_[1:]]
        server = StdioServerParameters(command=command, args=args_, env=params["env"], cwd=ROOT)
        async with Client(server) as client:
            assert len((await client.list_tools()).tools) == 2
            answer = await client.call_tool("read_catalog", {})
            assert not answer.is_error, answer

    rows = _timed(
        {
            "bare interpreter": lambda: subprocess.run([sys.executable, "-c", "pass"], check=True),
            "memory_mcp with the system checks (before)": lambda: asyncio.run(
                one_call(checked=True)
            ),
            "memory_mcp: started, tools listed, catalog read": lambda: asyncio.run(
                one_call(checked=False)
            ),
        },
        args.starts,
    )
    print(f"{args.starts} starts each          wall p50 / p95, s   processor s a start")
    figures = {}
    for name, (walls, cpu) in rows.items():
        p50, p95 = percentile(walls, 50), percentile(walls, 95)
        figures[name] = {"p50": p50, "p95": p95, "cpu": cpu}
        print(f"{name:<48} {p50:6.2f} / {p95:5.2f}   {cpu:6.2f}")
    return figures


if __name__ == "__main__":
    main()
