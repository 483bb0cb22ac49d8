"""Resetting the instruction to its reference — a human's insurance (PASSPORT.md §9).

The reference is the version a human approved; it lives in ``InstructionReference`` and only
staff change it. The first reference is the instruction as released — the checkout's
MEMORY-AGENT.md, adopted only while its sha256 is the checked-in one (``memory.agent.released``),
never whatever the file says when a reference is first needed. Reset writes the reference to the
live instruction in the skills repository (one commit) and touches nothing else: not the skills,
data, tables or measurements.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.agent import released, skills_repo
from memory.errors import MemoryServiceError
from memory.models import InstructionReference


class NotStaff(MemoryServiceError):
    code = "staff_only"
    status = 403


@dataclass(frozen=True)
class Difference:
    added: int
    removed: int
    changed_characters: int
    diff: str

    @property
    def same(self) -> bool:
        return self.added == 0 and self.removed == 0


def _path() -> Path:
    return skills_repo.instruction_path()


def current_text() -> str:
    return _path().read_text(encoding="utf-8")


def reference() -> InstructionReference:
    found = InstructionReference.objects.first()
    if found is None:
        found = InstructionReference.objects.create(
            text=released.released_instruction(), note="the instruction as released"
        )
    return found


def _require_staff(user: Any) -> None:
    if not getattr(user, "is_staff", False):
        raise NotStaff("only staff may change or restore the reference instruction")


def reference_set(*, text: str, user: Any, note: str = "") -> InstructionReference:
    _require_staff(user)
    return InstructionReference.objects.create(
        text=text, note=note, created_by=user if user.pk else None
    )


def difference() -> Difference:
    ref = reference().text.splitlines(keepends=True)
    now = current_text().splitlines(keepends=True)
    lines = list(difflib.unified_diff(ref, now, fromfile="reference", tofile="MEMORY-AGENT.md"))
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    matcher = difflib.SequenceMatcher(a="".join(ref), b="".join(now), autojunk=False)
    changed = sum(
        max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )
    return Difference(added=added, removed=removed, changed_characters=changed, diff="".join(lines))


def instruction_reset(*, user: Any) -> Difference:
    """Write the reference back. Returns the difference there was before the reset."""
    _require_staff(user)
    before = difference()
    skills_repo.write_instruction(
        reference().text,
        reason="reset to the reference instruction",
        author=f"staff:{getattr(user, 'username', '') or user.pk}",
    )
    return before
