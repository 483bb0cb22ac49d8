from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory.models import Architect, Run


@dataclass
class RecallContext:
    """Everything a level may read about one recall."""

    architect: Architect
    text: str
    keywords: list[str]
    scope: list[dict[str, Any]]
    lang: str
    run: Run | None = None
    # What a level leaves for the levels above it (level 1's weak candidates for level 2).
    extra: dict[str, Any] = field(default_factory=dict)
