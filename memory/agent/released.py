"""The instruction as released, fixed by its checked-in hash (PASSPORT.md §9, «Эталон»).

The first reference instruction is MEMORY-AGENT.md of the checkout only while that file is the
one released: its sha256 must be the one written here. A file edited by hand on a server is never
adopted as the reference. Releasing a new instruction is a deliberate act: change the file and
this hash together (a test compares them).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from django.conf import settings

from memory.errors import MemoryServiceError

INSTRUCTION_SHA256 = "585c0744028014913b562cec1bf67b457d527ae3db0d1aeec65708f420bcf80c"


class NotAsReleased(MemoryServiceError):
    code = "instruction_not_as_released"
    status = 409


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def released_instruction() -> str:
    """The released instruction's text; refused when the file is not the one released."""
    path = Path(settings.MEMORY_INSTRUCTION_RELEASE)
    text = path.read_text(encoding="utf-8")
    if sha256(text) != INSTRUCTION_SHA256:
        raise NotAsReleased(
            f"{path} is not the instruction as released (its sha256 is {sha256(text)[:12]}…, "
            f"the release's {INSTRUCTION_SHA256[:12]}…): it is not adopted as the reference; "
            "staff set the reference in the admin"
        )
    return text
