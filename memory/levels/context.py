from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory.models import Architect


@dataclass
class RecallContext:
    """Everything a level may read about one recall."""

    architect: Architect
    text: str
    keywords: list[str]
    scope: list[dict[str, Any]]
    lang: str
    extra: dict[str, Any] = field(default_factory=dict)
