"""A real Celery worker process for tests, on its own queue so no other worker takes its tasks."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memory.agent import mcp_config

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def celery_worker(**env: str) -> Iterator[str]:
    """Start a worker that reaches this test's database; yields the queue to send tasks to."""
    queue = f"test-{uuid.uuid4().hex[:8]}"
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "memory", "worker", "-Q", queue, "--pool", "solo",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel", "WARNING"],
        cwd=ROOT,
        env={**os.environ, **mcp_config.child_env(), **env},
    )  # fmt: skip
    try:
        yield queue
    finally:
        worker.terminate()
        worker.wait(timeout=20)
