"""The memory's calls out share one HTTP client a process (memory/outgoing.py)."""

from __future__ import annotations

import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from memory import outgoing


def test_one_client_a_process_and_a_new_one_after_a_fork():
    first = outgoing.client()
    assert outgoing.client() is first
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # a forked worker must not share the parent's connections
        os.write(write, b"new" if outgoing.client() is not first else b"old")
        os._exit(0)
    os.waitpid(child, 0)
    assert os.read(read, 3) == b"new"


def test_each_call_opens_its_own_connection_even_when_the_peer_would_keep_it():
    # A peer that keeps connections (HTTP/1.1) and counts them: a kept connection that the peer
    # closed while idle would fail the next call, so every call must come on a new one.
    opened: list[int] = []

    class Peer(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            opened.append(1)

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Peer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        answers = [outgoing.client().get(url, timeout=5).text for _ in range(3)]
    finally:
        server.shutdown()
        server.server_close()
    assert answers == ["ok"] * 3
    assert len(opened) == 3
