"""`manage.py memory_run` as a test starts it: its own data folder (and, on the PostgreSQL leg, its
own database), a free port on localhost, its output in a file, and a readiness check that fails
the test when the server does not come up."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
READY_WITHIN = 120.0  # seconds from start to the first answer (warming takes ~5 s when idle)
# httpx builds a TLS context for every client it makes (certifi's bundle read and parsed, 25–30
# ms of processor time, seconds when fifty threads make theirs at once); the tests' clients all
# share this one, as the memory's own calls share one client a process (memory/outgoing.py).
TLS = ssl.create_default_context()


def http_client(**options: Any) -> httpx.Client:
    """An httpx client for a served memory, with the shared TLS context."""
    return httpx.Client(verify=TLS, **options)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children_of(pid: int) -> dict[int, str]:
    """The processes whose parent is pid, with their command lines."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                found[int(entry.name)] = (
                    (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                )
        except (OSError, ValueError, IndexError):
            continue
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _postgresql(url: str) -> bool:
    """Does a server's DATABASE_URL name PostgreSQL (else it keeps SQLite in its data folder)?"""
    return url.startswith(("postgres://", "postgresql://"))


@contextmanager
def own_database(env: dict[str, str]) -> Iterator[None]:
    """On the PostgreSQL leg, a database of the server's own, dropped afterwards (the test
    database belongs to pytest's process); on SQLite the file under the data folder."""
    url = os.environ.get("DATABASE_URL", "")
    if not _postgresql(url):
        yield
        return
    import psycopg

    name = f"memory_serving_{uuid.uuid4().hex[:12]}"
    parts = urlsplit(url)
    admin = psycopg.connect(url, autocommit=True)
    try:
        admin.execute(f'CREATE DATABASE "{name}"')
        env["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{name}"))
        yield
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def query(env: dict[str, str], sql: str) -> list[tuple[Any, ...]]:
    """Read the served memory's database (its SQLite file, or its PostgreSQL database)."""
    url = env.get("DATABASE_URL", "")
    if _postgresql(url):
        import psycopg

        with psycopg.connect(url) as conn:
            return conn.execute(sql).fetchall()
    with sqlite3.connect(Path(env["MEMORY_DATA_DIR"]) / "memory.sqlite3") as conn:
        return conn.execute(sql).fetchall()


@dataclass
class Served:
    proc: subprocess.Popen[bytes]
    url: str
    log_path: Path
    env: dict[str, str]

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def tail(self, chars: int = 4000) -> str:
        return self.log()[-chars:]

    def children(self) -> dict[str, list[int]]:
        """memory_run's children by role: web (gunicorn's master), worker, beat."""
        roles: dict[str, list[int]] = {"web": [], "worker": [], "beat": []}
        for pid, cmd in children_of(self.proc.pid).items():
            if "-m gunicorn" in cmd:
                roles["web"].append(pid)
            elif "celery -A memory worker" in cmd:
                roles["worker"].append(pid)
            elif "celery -A memory beat" in cmd:
                roles["beat"].append(pid)
        return roles

    def wait_until_serving(self) -> None:
        deadline = time.monotonic() + READY_WITHIN
        with http_client(timeout=5) as http:
            while time.monotonic() < deadline:
                code = self.proc.poll()
                if code is not None:
                    pytest.fail(
                        f"memory_run exited with code {code} before serving:\n{self.tail()}"
                    )
                try:
                    if http.get(f"{self.url}/api/schema/").status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.5)
        pytest.fail(f"memory_run did not serve within {READY_WITHIN:.0f} s:\n{self.tail()}")

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def key(self, architect: str, max_depth: str = "") -> str:
        depth = ["--max-depth", max_depth] if max_depth else []
        printed = self.manage("memory_key", "--architect", architect, *depth)
        return [line for line in printed.splitlines() if line.startswith("mem_")][-1]

    def stop(self, timeout: float = 60) -> int:
        """SIGTERM to memory_run alone (its children are in their own process groups): it stops
        them itself. Returns its exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=timeout)


def server_env(data_dir: Path) -> dict[str, str]:
    """The environment of a production start: no test run's variables, embedded stores."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DATABASE_URL", "CELERY_BROKER_URL", "MEMORY_", "PYTEST_"))
    }
    env["MEMORY_DATA_DIR"] = str(data_dir)
    return env


@contextmanager
def memory_run(tmp_path: Path, *args: str, migrate: bool = True) -> Iterator[Served]:
    """Start memory_run on a free port, wait until it answers, stop it (and anything it left)."""
    env = server_env(tmp_path / "var")
    with own_database(env):
        port = free_port()
        log_path = tmp_path / "memory_run.log"
        served = Served(
            proc=None,  # type: ignore[arg-type]
            url=f"http://127.0.0.1:{port}",
            log_path=log_path,
            env=env,
        )
        if migrate:  # memory_run runs Django's system checks as it starts: not twice
            served.manage("migrate", "-v0", "--skip-checks")
        with log_path.open("wb") as log:
            served.proc = subprocess.Popen(
                [sys.executable, "manage.py", "memory_run", "--port", str(port), *args],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            served.wait_until_serving()
            yield served
        finally:
            started = [pid for pids in served.children().values() for pid in pids]
            try:
                served.stop()
            except subprocess.TimeoutExpired:
                served.proc.kill()
                served.proc.wait(timeout=10)
            for pid in set(started):  # only what this server started, should it leave any
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)
