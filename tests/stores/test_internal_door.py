"""One process owns the embedded stores; others reach them through the internal door.

The web server (pytest-django's live server, in this process) owns the local Qdrant and
LightRAG; a REAL Celery worker process, started with MEMORY_STORE_ACCESS=door, replays the
outbox by asking the owner through the door — both running at once.
"""

from __future__ import annotations

import html as html_lib
import json
import os
import re
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from django.conf import settings
from django.test import Client

from memory import celery_app, hosts
from memory.models import Note, OutboxItem
from memory.stores import door, outbox
from memory.stores.graph import DoorGraph
from memory.stores.vectors import DoorVectors, VectorItem, vectors
from tests.workers import celery_worker


def test_only_the_machine_secret_opens_the_door(live_server, alice_api):
    body = {"architect": 1, "kind": "notes", "query": "x"}
    url = f"{live_server.url}/internal/v1/vectors/search"
    assert (
        httpx.post(
            url, json=body, headers={"X-Machine-Secret": settings.MACHINE_SECRET}
        ).status_code
        == 200
    )
    assert (
        httpx.post(url, json=body, headers={"Authorization": f"Bearer {alice_api.key}"}).status_code
        == 401
    )
    assert httpx.post(url, json=body, headers={"X-Machine-Secret": "guess"}).status_code == 401
    assert httpx.post(url, json=body).status_code == 401
    # ...and the machine secret does not open the contract.
    contract = httpx.post(
        f"{live_server.url}/api/v1/recall",
        json={"text": "x"},
        headers={"X-Machine-Secret": settings.MACHINE_SECRET},
    )
    assert contract.status_code == 401


@pytest.mark.django_db(transaction=True)
def test_a_search_through_the_door_brings_the_same_hits_and_vectors(live_server, settings):
    """Level 4 compares the nearest notes with another phrasing of the question by their
    vectors: a process behind the door gets them as the owner has them."""
    settings.MEMORY_INTERNAL_URL = live_server.url
    door.client.cache_clear()
    items = [
        VectorItem(id=f"door-{i}", text=t, payload={"note": f"door-{i}"})
        for i, t in enumerate(["Мой брат Антон работает хирургом.", "Кинзу я не ем."])
    ]
    vectors().add(kind="notes", architect_id=424242, items=items)
    asked = {"kind": "notes", "architect_id": 424242, "query": "Кем работает брат?"}
    owned = vectors().search(**asked, with_vectors=True)
    through = DoorVectors().search(**asked, with_vectors=True)
    assert [h.id for h in through] == [h.id for h in owned] and len(owned) == 2
    for a, b in zip(through, owned, strict=True):
        assert a.vector == pytest.approx(b.vector, abs=1e-6)
        assert a.score == pytest.approx(b.score, abs=1e-6)
    assert all(h.vector is None for h in DoorVectors().search(**asked))


@pytest.mark.slow
def test_a_worker_in_another_process_replays_the_outbox_through_the_owner(
    live_server, alice, settings
):
    note = Note.objects.create(
        architect=alice, text="Мой брат Антон работает хирургом.", sender="t"
    )
    item = outbox.vectors_add(
        architect=alice,
        kind="notes",
        items=[VectorItem(id=str(note.pk), text=note.text, payload={"note": str(note.pk)})],
        run=None,
    )
    with celery_worker(MEMORY_STORE_ACCESS="door", MEMORY_INTERNAL_URL=live_server.url) as queue:
        celery_app.send_task("memory.outbox_replay", queue=queue)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and OutboxItem.objects.get(pk=item.pk).status != "done":
            time.sleep(0.3)
        assert OutboxItem.objects.get(pk=item.pk).status == "done"
    # Delivered by the owner (this process) into its own local Qdrant.
    hits = vectors().search(kind="notes", architect_id=alice.pk, query="Кем работает брат?")
    assert hits and hits[0].payload["note"] == str(note.pk)


# --- the door's address comes from settings only (PASSPORT.md §14.4) ----------------------------


class Listener:
    """A server on a free localhost port that records every request it gets: where an attacker
    would point a forged Host header to catch the machine secret."""

    def __init__(self) -> None:
        self.requests: list[dict[str, object]] = []
        heard = self.requests

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                heard.append(
                    {
                        "path": self.path,
                        "headers": dict(self.headers),
                        "body": self.rfile.read(size),
                    }
                )
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"hits": [], "entities": [], "relations": [], "chunks": []}')

            do_GET = do_POST = _record

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listener():
    heard = Listener()
    yield heard
    heard.close()


def _probe_json(response) -> dict:
    page = response.content.decode()
    return json.loads(
        html_lib.unescape(re.search(r'<pre id="probe-json">(.*?)</pre>', page, re.S)[1])
    )


@pytest.mark.parametrize("door_url", ["set", "unset"])
@pytest.mark.parametrize("access", ["direct", "door"])
def test_a_forged_host_cannot_send_the_machine_secret_anywhere(
    live_server, carol, listener, settings, monkeypatch, door_url, access
):
    settings.MEMORY_INTERNAL_URL = live_server.url if door_url == "set" else ""
    door.client.cache_clear()
    if access == "door":  # the probe's process reaches the stores through the door
        monkeypatch.setattr("playground.views.graph", lambda: DoorGraph())
        monkeypatch.setattr("playground.views.vectors", lambda: DoorVectors())
    browser = Client()
    browser.force_login(carol)
    forged = f"127.0.0.1:{listener.port}"  # a host ALLOWED_HOSTS admits, on the attacker's port
    answers = [
        browser.post(path, data, HTTP_HOST=forged)
        for path, data in (
            ("/en/settings/probe/graph", {"question": "Где служил Денис?"}),
            ("/en/settings/probe/vectors", {"question": "друг", "kind": "notes"}),
        )
    ]
    assert [a.status_code for a in answers] == [200, 200]
    assert listener.requests == []  # nothing reached the attacker's port: no secret, no body
    for answer in map(_probe_json, answers):
        if access == "door" and door_url == "unset":
            assert answer["error"]["code"] == "internal_door_address_missing"
            assert answer["error"]["message"] == door.URL_MISSING("en")  # said, not guessed
        else:
            assert "answer" in answer, answer
            assert answer["engine"].endswith("-door" if access == "door" else "-local")
        assert settings.MACHINE_SECRET not in json.dumps(answer)
    # The listener does hear what is sent to it, so the check above can fail.
    httpx.post(f"http://{forged}/internal/v1/graph/query", json={}, timeout=5)
    assert len(listener.requests) == 1


def test_the_door_client_never_follows_a_redirect_with_the_secret(listener, settings):
    class Redirecting(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(307)
            self.send_header("Location", f"http://127.0.0.1:{listener.port}/internal/v1/x")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = door.DoorClient(f"http://127.0.0.1:{server.server_address[1]}", "s3cret", 5)
        with pytest.raises(door.DoorUnavailable):
            client.vectors_search(architect_id=1, kind="notes", query="x", limit=1)
    finally:
        server.shutdown()
        server.server_close()
    assert listener.requests == []


def test_the_owners_refusal_keeps_its_code_and_retryable(live_server, alice):
    client = door.DoorClient(live_server.url, settings.MACHINE_SECRET, 30)
    with pytest.raises(door.DoorUnavailable) as refused:
        client.graph_query(
            architect_id=alice.pk, question="ok", hl_keywords=["ok"], ll_keywords=["ok"]
        )
    assert "graph_refused" in refused.value.message
    assert refused.value.retryable is False


@pytest.mark.slow
@pytest.mark.parametrize(
    "url, starts", [("", False), ("none", True), ("http://127.0.0.1:3700", True)]
)
def test_a_process_that_needs_the_door_does_not_start_without_its_address(url, starts):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MEMORY_INTERNAL_URL", "QDRANT_URL", "LIGHTRAG_URL", "LIGHTRAG_URLS")
    }
    env.update(MEMORY_STORE_ACCESS="door", MEMORY_INTERNAL_URL=url)
    done = subprocess.run(
        [sys.executable, "-c", "import memory.settings"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode == 0) is starts, done.stderr
    if not starts:
        assert "ImproperlyConfigured" in done.stderr and "MEMORY_INTERNAL_URL" in done.stderr


# --- ALLOWED_HOSTS with ports --------------------------------------------------------------------


def test_allowed_hosts_entries_keep_their_ports():
    allowed, ported = hosts.split(
        ["127.0.0.1:3700", "127.0.0.1:3800", "[::1]:3700", "Example.org:443", "example.org", "*"]
    )
    assert allowed == ["127.0.0.1", "[::1]", "example.org", "*"]
    assert ported == {"127.0.0.1": ["3700", "3800"], "[::1]": ["3700"]}


@pytest.mark.django_db
def test_a_host_written_with_a_port_is_served_on_that_port_only(settings):
    settings.ALLOWED_HOSTS, settings.ALLOWED_HOST_PORTS = hosts.split(
        ["127.0.0.1:3700", "localhost", "testserver"]
    )
    client = Client()

    def recall(host: str):
        return client.post("/api/v1/recall", {}, content_type="application/json", HTTP_HOST=host)

    assert recall("127.0.0.1:3700").status_code == 401  # reached the contract: no key
    assert recall("localhost:1234").status_code == 401  # an entry without a port: any port
    for host in ("127.0.0.1:3701", "127.0.0.1", "evil.example:3700"):
        refused = recall(host)
        assert refused.status_code == 400, host
        assert refused.json()["error"]["code"] == "bad_host"
        assert host in refused.json()["error"]["message"]
    door_refused = client.post("/internal/v1/graph/query", {}, HTTP_HOST="127.0.0.1:9")
    assert door_refused.status_code == 400 and door_refused.json()["error"]["code"] == "bad_host"
    page = client.get("/ru/login/", HTTP_HOST="127.0.0.1:3701")
    assert page.status_code == 400 and page["Content-Type"].startswith("text/plain")
    assert client.get("/ru/login/", HTTP_HOST="127.0.0.1:3700").status_code == 200
