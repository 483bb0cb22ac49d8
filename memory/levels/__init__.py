"""What each level of the ladder searches. The order, the escalation rule and ``depth_used``
live in ``memory.ladder``; this package only says how each store is asked."""

from __future__ import annotations

from memory.ladder import Step
from memory.levels import graph as graph_level
from memory.levels import model as model_level
from memory.levels import tables
from memory.levels import vectors as vectors_level
from memory.levels.context import RecallContext


def steps_for(ctx: RecallContext) -> list[Step]:
    """The levels that exist in this build, bound to one recall."""
    return [
        Step(1, available=lambda: None, search=lambda: tables.search(ctx)),
        Step(2, available=model_level.available, search=lambda: model_level.search(ctx)),
        Step(3, available=lambda: None, search=lambda: graph_level.search(ctx)),
        Step(4, available=lambda: None, search=lambda: vectors_level.search(ctx)),
    ]


__all__ = ["RecallContext", "steps_for"]
