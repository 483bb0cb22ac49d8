"""`make run`'s server holds graph inserts in memory and saves them when it stops.

With GRAPH_SAVE_BYTES at one byte every insert after the first is held (findable, not on disk);
a SIGTERM stops the server the way an operator does, and gunicorn's ``worker_exit`` saves the
graph and marks its held outbox items done (a kill -9 instead is tests/reliability/test_crash.py:
the next start replays them). On the way, bench/rest_recall.py asks the running server over REST,
so the bench a user runs against `make run` does not rot."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import httpx
import pytest

from tests.serving.process import ROOT, memory_run, query

pytestmark = pytest.mark.slow

FACTS = [
    "Мой сосед Аркадий Смирнов чинит велосипеды во дворе",
    "Моя коллега Вера Лебедева ведёт бухгалтерию фирмы",
    "Мой тренер Геннадий Орлов работает в бассейне «Чайка»",
]


def _statuses(env: dict[str, str]) -> dict[str, int]:
    rows = query(
        env, "SELECT status, COUNT(*) FROM memory_outboxitem WHERE store = 'graph' GROUP BY status"
    )
    return dict(rows)


def test_held_graph_inserts_are_saved_when_the_server_stops(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPH_SAVE_BYTES", "1")
    monkeypatch.setenv("GRAPH_SAVE_SECONDS", "3600")  # no idle save while it runs
    with memory_run(tmp_path) as served:
        key = served.key("alice", "deep")
        # The first fact alone (an empty graph costs nothing to save), then the rest: held.
        for told in (FACTS[:1], FACTS[1:]):
            for fact in told:
                answer = httpx.post(
                    f"{served.url}/api/v1/remember",
                    json={"text": fact},
                    headers={"Authorization": f"Bearer {key}"},
                    timeout=60,
                )
                assert answer.status_code == 200, answer.text
            deadline = time.monotonic() + 120
            while _statuses(served.env).get("queued") and time.monotonic() < deadline:
                time.sleep(0.5)
        running = _statuses(served.env)
        assert not running.get("queued") and running.get("held", 0) >= 1, running

        asked = tmp_path / "questions.txt"  # its own: LoCoMo is not beside a fresh clone
        asked.write_text("Кто чинит велосипеды?\nКто ведёт бухгалтерию?\nГде работает тренер?\n")
        bench = subprocess.run(
            [
                sys.executable,
                "bench/rest_recall.py",
                served.url,
                key,
                "--questions",
                "3",
                "--questions-file",
                str(asked),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        rows = {
            line.split()[0]: line.split()
            for line in bench.stdout.splitlines()[2:]
            if not line.startswith("goal:")
        }
        assert set(rows) == {"standard", "deep"}, bench.stdout + bench.stderr
        assert "goal: standard p95 ≤ 100 ms" in bench.stdout
        assert all(float(row[1]) > 0 and row[3] == "0" for row in rows.values())  # no errors

        assert served.stop() == 0, served.tail()
        stopped = _statuses(served.env)
        assert stopped == {"done": len(FACTS)}, (stopped, served.tail())
    chunks = tmp_path / "var" / "stores" / "lightrag" / "architect-1" / "kv_store_text_chunks.json"
    saved = json.loads(chunks.read_text())
    assert len(saved) == len(FACTS)  # every note's chunk is on disk
