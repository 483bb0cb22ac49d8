"""Gunicorn's configuration for `make run` (``manage.py memory_run`` passes the numbers).

Gunicorn reads this module with ``-c python:memory.serving``: only names of its settings count.
The server is gunicorn's threaded worker (``gthread``): with the embedded stores exactly one
process may own them (local Qdrant locks its folder, in-process LightRAG lives in one process's
memory), so the web runs as one process with many threads; with Qdrant and LightRAG servers
``WEB_WORKERS`` may be raised.
"""

from __future__ import annotations

import signal
from typing import Any

wsgi_app = "memory.wsgi:application"
worker_class = "gthread"
# The master kills a worker whose main loop has been silent this long. The gthread loop beats
# while requests run in its threads, so this bounds start-up (warming takes seconds on a cold
# machine), not the length of a request.
timeout = 120
# On SIGTERM, requests in flight get this long to finish.
graceful_timeout = 30
# The control socket's default path is shared by every gunicorn of the user; two runs would
# collide on it, and nothing here uses it.
control_socket_disable = True


def post_worker_init(worker: Any) -> None:
    """Warm the stores in the process that serves, before it accepts its first request: the
    listening socket is already open, so early clients wait in its backlog instead of failing."""
    from memory import stores  # gunicorn reads this file before Django is set up

    worker.log.info("warming up the stores (embedder, morphology, NER, graph)…")
    stores.warm()
    _end_rounds_on_term()
    worker.log.info("warm: serving")


def _end_rounds_on_term() -> None:
    """On SIGTERM the outbox's rounds in flight end at their next batch (gunicorn then waits for
    the requests in flight, a worker's replay through the internal door among them): the stop
    no longer waits for a backlog's rounds, and what they gave back is delivered after the start.
    Gunicorn's own handler, installed before this hook, still runs."""
    from memory.stores import outbox  # gunicorn reads this file before Django is set up

    previous = signal.getsignal(signal.SIGTERM)

    def stopping(signum: int, frame: Any) -> None:
        outbox.stop_rounds()
        if callable(previous):
            previous(signum, frame)

    signal.signal(signal.SIGTERM, stopping)


def worker_exit(server: Any, worker: Any) -> None:
    """Save what the in-process graph holds in memory before the process goes (its outbox items
    become done); if this fails or never runs (kill -9), the next start replays them."""
    from memory.stores import outbox

    try:
        settled = outbox.save_held()
    except Exception as error:  # the process is leaving: say so, the replay covers it
        worker.log.warning("the graph's held inserts were not saved on exit: %s", error)
    else:
        worker.log.info("saved the graph: %s held outbox items done", settled)
