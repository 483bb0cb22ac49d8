from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory.models import Architect, Run
from memory.relevance import TermWeights, term_weights


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

    def excluded(self, item: Any) -> bool:
        """Did the caller already get this item (``previous_results``)? Or is it something a
        shadow replay must not see: what was learned since the request it replays was asked."""
        unseen = self.extra.get("unseen")
        if unseen:
            keys = (
                {item}
                if isinstance(item, str)
                else {str(item.get(k) or "") for k in ("note", "id")}
            )
            if keys & unseen:
                return True
        previous = self.extra.get("previous")
        return previous is not None and previous.excludes(item)

    def weights(self) -> TermWeights:
        """The question's terms weighed against the architect's notes, computed once."""
        if "weights" not in self.extra:
            self.extra["weights"] = term_weights(self.architect, self.keywords)
        return self.extra["weights"]
