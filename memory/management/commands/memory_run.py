"""Serve the memory on embedded defaults: a Celery worker beside the web server, in one command."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Run the web server and a Celery worker beside it (stops both on Ctrl-C)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument("--no-worker", action="store_true", help="serve the web only")

    def handle(self, *args: Any, **options: Any) -> None:
        from memory import stores

        # This web process owns the embedded stores (local Qdrant locks its folder; LightRAG
        # lives in one process's memory). The worker and the MCP servers a model starts reach
        # them through the internal door at this address, opened by the machine secret.
        os.environ.setdefault("MEMORY_INTERNAL_URL", f"http://{options['host']}:{options['port']}")
        settings.MEMORY_INTERNAL_URL = os.environ["MEMORY_INTERNAL_URL"]
        worker_env = {**os.environ}
        if stores.embedded():
            worker_env["MEMORY_STORE_ACCESS"] = "door"
        worker = None
        if not options["no_worker"]:
            worker = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "memory",
                    "worker",
                    "--loglevel",
                    "INFO",
                    "--pool",
                    "threads",
                    "--concurrency",
                    "4",
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                ],
                env=worker_env,
            )
            self.stdout.write(f"celery worker started (pid {worker.pid})")
        self.stdout.write("warming up the embedded stores (embedder, morphology, NER, graph)…")
        stores.warm()
        try:
            call_command("runserver", f"{options['host']}:{options['port']}", use_reloader=False)
        finally:
            if worker is not None and worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
                try:
                    worker.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    worker.kill()
