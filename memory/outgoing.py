"""One HTTP client a process for every call the memory makes out: the internal door, a LightRAG
server, a model's or an embeddings' HTTP API.

httpx builds a TLS context for every client it creates (certifi's bundle read and parsed), 25–30
ms of processor time here, and ``httpx.post`` creates a client per call (in a run of the suite,
34 s of processor time, 13 s of it a worker draining the outbox through the door). The client is
made once a process, and again in a forked child. Connections are not kept between calls: a peer
that closed an idle one (gunicorn does after two seconds) would turn the next call into a
spurious error. Each call passes its own timeout.
"""

from __future__ import annotations

import os
from functools import lru_cache

import httpx


@lru_cache(maxsize=1)
def client() -> httpx.Client:
    return httpx.Client(limits=httpx.Limits(max_keepalive_connections=0))


os.register_at_fork(after_in_child=client.cache_clear)
