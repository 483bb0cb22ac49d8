"""One HTTP client a process for every call the memory makes out: the internal door, a LightRAG
server, a model's or an embeddings' HTTP API.

httpx builds a TLS context for every client it creates (certifi's bundle read and parsed), 25–30
ms of processor time here, and ``httpx.post`` creates a client per call: a worker draining the
outbox through the door spent more on that than on the call to localhost. The client is made
once a process (again after a fork). Connections are not kept between calls: a peer that closed
an idle one (gunicorn does after two seconds) would turn the next call into a spurious error.
Each call passes its own timeout.
"""

from __future__ import annotations

import os
import threading

import httpx

_lock = threading.Lock()
_client: httpx.Client | None = None
_pid = 0


def client() -> httpx.Client:
    global _client, _pid
    if _client is None or _pid != os.getpid():
        with _lock:
            if _client is None or _pid != os.getpid():
                _client = httpx.Client(limits=httpx.Limits(max_keepalive_connections=0))
                _pid = os.getpid()
    return _client
