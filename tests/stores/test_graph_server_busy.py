"""A LightRAG server whose pipeline is busy answers 409 "busy" to graph edits (measured against
lightrag-hku 1.5.7: a second note's entities sent while the first note's text is still being
processed). Busy passes: the write waits for it, and past the wait it is a retryable error the
outbox keeps — never a dead item.

The busy state is produced by a small HTTP server on 127.0.0.1 speaking the server's answer
(a real lightrag-server is busy for a few milliseconds only, too short to aim a test at); httpx,
the engine and its error rules are real. The real server's busy path runs in test_graph_server.py.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from memory.models import Architect
from memory.stores.graph_server import LightRagServer
from memory.stores.graph_types import Entity, GraphUnavailable

BUSY = {
    "detail": "Pipeline is busy with another operation. Wait for the running job to finish "
    "before editing the knowledge graph."
}


class Busy:
    """Answers 409 busy ``times`` times, then 200; the first answer after ``first_delay`` s."""

    def __init__(self, times: int, first_delay: float = 0.0) -> None:
        self.left = times
        self.first_delay = first_delay
        self.paths: list[str] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers["Content-Length"]))
                stub.paths.append(self.path)
                if len(stub.paths) == 1:
                    time.sleep(stub.first_delay)
                status, reply = (409, BUSY) if stub.left > 0 else (200, {"status": "success"})
                stub.left -= 1
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def busy_server():
    servers: list[Busy] = []

    def start(times: int, first_delay: float = 0.0) -> tuple[Busy, LightRagServer, int]:
        stub = Busy(times, first_delay)
        servers.append(stub)
        architect = Architect.objects.create(name=f"busy-{len(servers)}")
        engine = LightRagServer(urls={architect.name: stub.url}, template="", api_key="")
        return stub, engine, architect.pk

    yield start
    for stub in servers:
        stub.server.shutdown()


def _write(engine: LightRagServer, architect_id: int) -> None:
    engine.insert(
        architect_id=architect_id,
        chunks=[],
        entities=[Entity(name="Антон", type="person", source="note-x")],
        relations=[],
    )


@pytest.mark.django_db
def test_a_busy_server_is_waited_for_and_the_write_lands(busy_server, settings):
    settings.GRAPH_BUSY_WAIT = 5.0
    stub, engine, architect_id = busy_server(times=3)
    _write(engine, architect_id)
    assert stub.paths == ["/graph/entity/create"] * 4  # three busy answers, then done


@pytest.mark.django_db
def test_a_server_busy_past_the_wait_is_a_retryable_error(busy_server, settings):
    settings.GRAPH_BUSY_WAIT = 0.5
    stub, engine, architect_id = busy_server(times=1000)
    with pytest.raises(GraphUnavailable) as raised:
        _write(engine, architect_id)
    assert raised.value.retryable is True  # the outbox keeps it queued, not dead
    assert "busy" in str(raised.value)
    assert 2 <= len(stub.paths) <= 10


@pytest.mark.django_db
def test_a_busy_answer_slower_than_the_wait_is_still_asked_again(busy_server, settings):
    # The wait is counted from the first busy answer: a first request that took longer than the
    # whole wait (a loaded machine) is asked again and the write lands. Counted from before the
    # first request, it was given up after one try.
    settings.GRAPH_BUSY_WAIT = 0.5
    stub, engine, architect_id = busy_server(times=1, first_delay=0.8)
    _write(engine, architect_id)
    assert stub.paths == ["/graph/entity/create"] * 2
