"""A store's error as its level's ``failed`` report entry: the levels never let one become a 500
(PASSPORT.md §14.4). The stores classify their errors (``MemoryServiceError`` with a code and
whether a retry can help); anything else is a bug in a store, logged in full and still reported."""

from __future__ import annotations

import logging

from memory.errors import MemoryServiceError

log = logging.getLogger(__name__)


def reason(error: Exception) -> str:
    if isinstance(error, MemoryServiceError):
        return f"{error.code}: {error.message}"
    log.error("a store raised an unclassified error", exc_info=error)
    return f"{type(error).__name__}: {error}"
