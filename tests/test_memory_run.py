"""`make run`'s command on its own data folder: the web server owns the embedded stores, and the
worker it starts beside it is told to reach them through the internal door."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_make_run_serves_with_a_worker_that_uses_the_door(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DATABASE_URL", "CELERY_BROKER_URL", "MEMORY_"))
    }
    env["MEMORY_DATA_DIR"] = str(tmp_path / "var")
    port = free_port()
    _manage(env, "migrate", "-v0")
    key = _manage(env, "memory_key", "--architect", "alice").strip().splitlines()[-1]
    server = subprocess.Popen(
        [sys.executable, "manage.py", "memory_run", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/schema/", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        answer = httpx.post(
            f"http://127.0.0.1:{port}/api/v1/remember",
            json={"text": "У меня есть друг Дима"},
            headers={"Authorization": f"Bearer {key}"},
            timeout=60,
        ).json()
        assert answer["stores"]["vectors"]["status"] == "written"
        workers = subprocess.run(
            ["pgrep", "-f", "-s", str(os.getpgid(server.pid)), "celery -A memory worker"],
            capture_output=True,
            text=True,
        ).stdout.split()
        assert workers, "no worker beside the web server"
        environ = Path(f"/proc/{workers[0]}/environ").read_bytes().split(b"\0")
        assert b"MEMORY_STORE_ACCESS=door" in environ
        assert f"MEMORY_INTERNAL_URL=http://127.0.0.1:{port}".encode() in environ
    finally:
        os.killpg(os.getpgid(server.pid), 15)
        server.wait(timeout=30)
