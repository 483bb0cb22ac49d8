"""Serve the memory in one command: gunicorn for the web, a Celery worker and a Celery beat beside
it, each background process restarted when it dies.

The supervisor is a small loop of our own rather than honcho or supervisord: honcho stops every
process when one exits (the opposite of restarting a dead worker), and supervisord is a daemon
with its own configuration file and control socket that gives up on a process after a fixed
number of fast failures. Here the rules are three: a dead worker or beat is logged with its exit
code and started again after a backoff that grows while it keeps dying fast; the web server
dying ends the command with its exit code; Ctrl-C or SIGTERM stops every child cleanly.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory import stores

log = logging.getLogger(__name__)

TICK = 0.2  # seconds between looks at the children
RESTART_DELAY = 1.0  # the first restart waits this long; each fast death in a row doubles it
RESTART_MAX_DELAY = 60.0
STABLE_AFTER = 30.0  # a child that lived this long is healthy again: its backoff starts over
# gunicorn lets requests in flight finish for 30 s (memory/serving.py), Celery's warm shutdown
# lets running tasks finish; after this the rest are killed (a second Ctrl-C kills at once).
STOP_GRACE = 40.0
PR_SET_PDEATHSIG = 1
# Looked up once here: between fork and exec the child should do as little as it can.
_prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None


def _die_with_parent() -> None:
    """Runs in each child between fork and exec (Linux): when memory_run dies, even by SIGKILL,
    the child gets SIGTERM, so no server outlives its supervisor holding the port and the
    embedded stores' lock."""
    if _prctl is not None:
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _how(code: int) -> str:
    if code < 0:
        return f"was killed by {signal.Signals(-code).name} (exit code {code})"
    return f"exited with code {code}"


@dataclass
class Child:
    name: str
    argv: list[str]
    env: dict[str, str]
    proc: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    fast_deaths: int = 0  # deaths in a row, each sooner than STABLE_AFTER after its start
    restart_at: float = 0.0

    def start(self) -> None:
        # Its own process group: a Ctrl-C in the terminal reaches memory_run alone, which then
        # stops the children with SIGTERM (gunicorn's graceful stop; SIGINT is its quick one).
        self.proc = subprocess.Popen(
            self.argv,
            env=self.env,
            stdin=subprocess.DEVNULL,
            process_group=0,
            preexec_fn=_die_with_parent,  # safe: memory_run starts no threads
        )
        self.started_at = time.monotonic()
        log.info("memory_run: %s started (pid %s)", self.name, self.proc.pid)


class Supervisor:
    def __init__(self, web: Child, background: list[Child]) -> None:
        self.web = web
        self.background = background
        self.signals: list[int] = []

    @property
    def children(self) -> list[Child]:
        return [self.web, *self.background]

    def _on_signal(self, signum: int, _frame: Any) -> None:
        self.signals.append(signum)

    def run(self) -> int:
        """Serve until a signal (exit code 0) or until the web server dies (its exit code)."""
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._on_signal)
        try:
            for child in self.children:
                child.start()
            while not self.signals:
                assert self.web.proc is not None
                code = self.web.proc.poll()
                if code is not None:
                    log.error("memory_run: %s %s; stopping the rest", self.web.name, _how(code))
                    return 128 - code if code < 0 else code
                for child in self.background:
                    self._watch(child)
                time.sleep(TICK)
            log.info("memory_run: %s received, stopping", signal.Signals(self.signals[0]).name)
            return 0
        finally:
            self._stop_all()

    def _watch(self, child: Child) -> None:
        now = time.monotonic()
        if child.proc is None:
            if now >= child.restart_at:
                child.start()
            return
        code = child.proc.poll()
        if code is None:
            return
        lived = now - child.started_at
        child.fast_deaths = child.fast_deaths + 1 if lived < STABLE_AFTER else 0
        delay = min(RESTART_DELAY * 2 ** max(child.fast_deaths - 1, 0), RESTART_MAX_DELAY)
        log.warning(
            "memory_run: %s (pid %s) %s after %.0f s; restarting in %.0f s",
            child.name,
            child.proc.pid,
            _how(code),
            lived,
            delay,
        )
        child.proc = None
        child.restart_at = now + delay

    def _stop_all(self) -> None:
        running = [c for c in self.children if c.proc is not None and c.proc.poll() is None]
        for child in running:
            assert child.proc is not None
            child.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE
        killed = False
        while running:
            running = [c for c in running if c.proc is not None and c.proc.poll() is None]
            if running and not killed and (time.monotonic() > deadline or len(self.signals) > 1):
                for child in running:
                    assert child.proc is not None
                    log.warning("memory_run: %s did not stop, killing it", child.name)
                    child.proc.kill()
                killed = True
            time.sleep(TICK)
        for child in self.children:
            if child.proc is not None and child.proc.returncode is not None:
                log.info("memory_run: %s %s", child.name, _how(child.proc.returncode))


def _connect_host(host: str) -> str:
    """The address the children reach the web server at: a wildcard bind is reached locally."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


class Command(BaseCommand):
    help = (
        "Serve the memory through gunicorn (threads) with a Celery worker and a Celery beat "
        "beside it; a dead worker or beat is restarted, Ctrl-C stops them all."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "3700")))
        parser.add_argument("--workers", type=int, default=settings.WEB_WORKERS)
        parser.add_argument("--threads", type=int, default=settings.WEB_THREADS)
        parser.add_argument(
            "--no-worker", action="store_true", help="serve the web only (no worker, no beat)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        host, port = options["host"], options["port"]
        embedded = stores.embedded()
        if embedded and options["workers"] != 1:
            raise CommandError(
                f"WEB_WORKERS={options['workers']}: with the embedded stores exactly one web "
                "process may own them (local Qdrant locks its folder, in-process LightRAG lives "
                "in one process); raise WEB_THREADS instead, or name Qdrant and LightRAG servers "
                "(QDRANT_URL and LIGHTRAG_URL, LIGHTRAG_URLS or GRAPH_DATABASE_URL)"
            )
        # The worker, the beat and the MCP servers a model starts reach the embedded stores
        # through the internal door at this address, opened by the machine secret.
        internal_url = os.environ.get("MEMORY_INTERNAL_URL") or (
            f"http://{_connect_host(host)}:{port}"
        )
        web_env = {**os.environ, "MEMORY_INTERNAL_URL": internal_url}
        # This command ran Django's system checks before starting anything (BaseCommand does):
        # the worker and the beat skip repeating them, 0.6 s of the 1.5 s each start costs.
        background_env = {**web_env, "CELERY_SKIP_CHECKS": "1"}
        if embedded:
            background_env["MEMORY_STORE_ACCESS"] = "door"
        bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        web = Child(
            "web server (gunicorn)",
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                "python:memory.serving",
                "--bind",
                bind,
                "--workers",
                str(options["workers"]),
                "--threads",
                str(options["threads"]),
                "--access-logfile",
                "-",
            ],
            web_env,
        )
        celery = [sys.executable, "-m", "celery", "-A", "memory"]
        background = [
            Child(
                "celery worker",
                [
                    *celery,
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
                background_env,
            ),
            Child(
                "celery beat",
                [
                    *celery,
                    "beat",
                    "--loglevel",
                    "INFO",
                    "--schedule",
                    str(settings.DATA_DIR / "celerybeat-schedule"),
                ],
                background_env,
            ),
        ]
        if options["no_worker"]:
            background = []
        self.stdout.write(
            f"serving on http://{bind} ({options['workers']} process × {options['threads']} "
            f"threads); the internal door is {internal_url}"
        )
        code = Supervisor(web, background).run()
        if code:
            raise SystemExit(code)
