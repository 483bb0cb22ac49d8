"""The memory's calls out share one HTTP client a process (memory/outgoing.py)."""

from __future__ import annotations

import os

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


def test_connections_are_not_kept_between_calls():
    # A kept connection the peer closed while idle would fail the next call.
    pool = outgoing.client()._transport._pool  # type: ignore[attr-defined]
    assert pool._max_keepalive_connections == 0
