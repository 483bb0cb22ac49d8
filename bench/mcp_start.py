"""What a model call pays to start the agent's MCP server: the model (`claude -p`) starts
`manage.py memory_mcp` afresh for every call, so its start-up is part of every level-2 answer.

Starts the server as the model does (memory/agent/mcp_config.py), lists its tools and reads the
catalog, N times; prints wall time to the first answer and the child's processor time, beside two
baselines measured in the same run: a bare interpreter, and `manage.py check` (Django's system
checks, which the server no longer runs).

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


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(run: Any, starts: int) -> tuple[list[float], float]:
    walls, cpu = [], _child_cpu()
    for _ in range(starts):
        started = time.perf_counter()
        run()
        walls.append(time.perf_counter() - started)
    return walls, (_child_cpu() - cpu) / starts


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

    async def one_call() -> None:
        server = StdioServerParameters(
            command=params["command"], args=params["args"], env=params["env"]
        )
        async with Client(server) as client:
            assert len((await client.list_tools()).tools) == 2
            answer = await client.call_tool("read_catalog", {})
            assert not answer.is_error, answer

    env = params["env"]
    rows = {
        "bare interpreter": _timed(
            lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), args.starts
        ),
        "manage.py check (Django's system checks)": _timed(
            lambda: subprocess.run(
                [sys.executable, str(ROOT / "manage.py"), "check"],
                env=env,
                check=True,
                capture_output=True,
            ),
            args.starts,
        ),
        "memory_mcp: started, tools listed, catalog read": _timed(
            lambda: asyncio.run(one_call()), args.starts
        ),
    }
    print(f"{args.starts} starts each          wall p50 / p95, s   processor s a start")
    figures = {}
    for name, (walls, cpu) in rows.items():
        p50, p95 = percentile(walls, 50), percentile(walls, 95)
        figures[name] = {"p50": p50, "p95": p95, "cpu": cpu}
        print(f"{name:<48} {p50:6.2f} / {p95:5.2f}   {cpu:6.2f}")
    return figures


if __name__ == "__main__":
    main()
