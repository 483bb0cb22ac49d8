"""A crashing machine loses nothing (PASSPORT.md §14.1–14.2).

`make run`'s command serves a burst of 200 remembers from four clients; in the middle of it every
one of its processes (web, worker, beat, the supervisor) is killed with SIGKILL at once. Started
again on the same data, its periodic sweep replays what was left: every note the database holds
— every acknowledged one among them — reaches the vectors and the graph, no outbox item stays
queued and no run stays running. Runs on SQLite and, on CI's second leg, on PostgreSQL.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.serving.process import (
    ROOT,
    Served,
    alive,
    children_of,
    free_port,
    http_client,
    own_database,
    query,
    server_env,
)

pytestmark = pytest.mark.slow

NAMES = ["Антон Петров", "Анна Смирнова", "Сергей Иванов", "Ольга Кузнецова", "Дмитрий Орлов"]
CITIES = ["Казани", "Новосибирске", "Самаре", "Омске", "Твери"]
BURST = 200
KILL_AFTER = 60  # acknowledged remembers before the crash
SETTLED_WITHIN = 180.0


def _start(env: dict[str, str], port: int, log_path: Path) -> Served:
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "memory_run", "--port", str(port)],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    served = Served(proc=proc, url=f"http://127.0.0.1:{port}", log_path=log_path, env=env)
    served.wait_until_serving()
    return served


def _descendants(pid: int) -> list[int]:
    found, frontier = [], [pid]
    while frontier:
        children = list(children_of(frontier.pop()))
        found += children
        frontier += children
    return found


def _crash(served: Served) -> None:
    """SIGKILL to every process of the server at once, as a power cut would."""
    pids = [served.proc.pid, *_descendants(served.proc.pid)]
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    served.proc.wait(timeout=30)
    deadline = time.monotonic() + 30
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.2)


def _burst(served: Served, key: str, acked: list[str], stop: threading.Event) -> None:
    counter = iter(range(BURST))
    lock = threading.Lock()
    answered: dict[object, int] = {}  # status (or transport error) → count, for the report

    def client() -> None:
        with http_client(timeout=60) as http:
            while not stop.is_set():
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                text = f"Мой коллега {NAMES[i % 5]} живёт в {CITIES[i // 5 % 5]}, запись {i}"
                try:
                    response = http.post(
                        f"{served.url}/api/v1/remember",
                        json={"text": text},
                        headers={"Authorization": f"Bearer {key}"},
                    )
                except httpx.HTTPError as error:
                    with lock:
                        answered[type(error).__name__] = answered.get(type(error).__name__, 0) + 1
                    continue  # the server is gone: this one was never acknowledged
                with lock:
                    answered[response.status_code] = answered.get(response.status_code, 0) + 1
                    if response.status_code != 200 and "first_refusal" not in answered:
                        answered["first_refusal"] = response.text[:300]  # type: ignore[assignment]
                if response.status_code == 200:
                    with lock:
                        acked.append(response.json()["stored"]["note"])

    threads = [threading.Thread(target=client) for _ in range(4)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 300
    while len(acked) < KILL_AFTER and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(acked) >= KILL_AFTER, (
        f"only {len(acked)} acknowledged; answers {answered}:\n{served.tail()}"
    )
    _crash(served)
    stop.set()
    for t in threads:
        t.join(timeout=120)


def _in_stores(data_dir: Path, architect_id: int, notes: list[str]) -> tuple[set[str], set[str]]:
    """The notes found in the local Qdrant and in LightRAG's chunk store (server stopped)."""
    from qdrant_client import QdrantClient

    from memory.stores.embeddings import embedder
    from memory.stores.vectors import COLLECTION_PREFIX, point_id

    e = embedder()
    client = QdrantClient(path=str(data_dir / "stores" / "qdrant"))
    try:
        name = f"{COLLECTION_PREFIX['notes']}-{e.name}-{e.dimension}-a{architect_id}"
        points = client.retrieve(name, ids=[point_id(n) for n in notes], with_payload=True)
        in_vectors = {p.payload["key"] for p in points}
    finally:
        client.close()
    chunks_file = (
        data_dir / "stores" / "lightrag" / f"architect-{architect_id}" / "kv_store_text_chunks.json"
    )
    chunks = json.loads(chunks_file.read_text()) if chunks_file.exists() else {}
    sources = {c.get("source_id", "") for c in chunks.values()}
    in_graph = {n for n in notes if f"note-{n}" in sources}
    return in_vectors, in_graph


def test_kill_9_in_the_middle_of_a_burst_loses_no_acknowledged_note(tmp_path):
    data_dir = tmp_path / "var"
    env = server_env(data_dir)
    env.update(MEMORY_SWEEP_SECONDS="2", OUTBOX_LEASE_SECONDS="5")
    with own_database(env):
        first = Served(proc=None, url="", log_path=tmp_path / "run.log", env=env)  # type: ignore[arg-type]
        first.manage("migrate", "-v0", "--skip-checks")  # memory_run runs the checks
        key = first.key("alice")
        port = free_port()
        served = _start(env, port, tmp_path / "run.log")
        acked: list[str] = []
        _burst(served, key, acked, threading.Event())

        again = _start(env, port, tmp_path / "run.log")
        try:
            deadline = time.monotonic() + SETTLED_WITHIN
            while time.monotonic() < deadline:
                queued = query(
                    env, "SELECT COUNT(*) FROM memory_outboxitem WHERE status = 'queued'"
                )[0][0]
                running = query(env, "SELECT COUNT(*) FROM memory_run WHERE status = 'running'")[0][
                    0
                ]
                if queued == 0 and running == 0:
                    break
                time.sleep(1)
            assert (queued, running) == (0, 0), again.tail()
        finally:
            assert again.stop() == 0, again.tail()

        architect_id = query(env, "SELECT id FROM memory_architect WHERE name = 'alice'")[0][0]
        notes = [str(row[0]).replace("-", "") for row in query(env, "SELECT id FROM memory_note")]
        notes = [f"{n[:8]}-{n[8:12]}-{n[12:16]}-{n[16:20]}-{n[20:]}" for n in notes]
        assert set(acked) <= set(notes), "an acknowledged note is missing from the database"
        assert len(notes) < BURST, "the crash came after the burst: nothing was tested"
        dead = query(env, "SELECT id, last_error FROM memory_outboxitem WHERE status = 'dead'")
        assert dead == []
        # What the graph held in memory was saved when the server stopped (or replayed if not).
        held = query(env, "SELECT COUNT(*) FROM memory_outboxitem WHERE status = 'held'")
        assert held == [(0,)]
        in_vectors, in_graph = _in_stores(data_dir, architect_id, notes)
        assert set(notes) - in_vectors == set(), "notes missing from the vectors"
        assert set(notes) - in_graph == set(), "notes missing from the graph"
        print(f"\nburst: {len(acked)} acknowledged before the crash, {len(notes)} notes kept")
