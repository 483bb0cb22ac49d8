"""The flag a shadow replay raises (skill evolution): while it is up, nothing the replay does may
reach anyone — no conversation thread is recorded, the model's usage is booked as the shadow's.
A leaf, so the model adapters read it without importing the evolution that raises it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_shadow: ContextVar[bool] = ContextVar("memory_in_shadow", default=False)


def in_shadow() -> bool:
    """True inside a shadow replay."""
    return _shadow.get()


@contextmanager
def shadowing() -> Iterator[None]:
    token = _shadow.set(True)
    try:
        yield
    finally:
        _shadow.reset(token)
