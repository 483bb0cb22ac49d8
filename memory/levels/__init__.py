"""What each level of the ladder searches: ``relational`` (1), ``model`` (2), ``graph`` (3),
``vectors`` (4), ``research`` (5, the job itself is the verbs'), with one recall as they see it
(``context``) and ``previous_results`` (``previous``). The order, the escalation rule and
``depth_used`` live in ``memory.ladder``; this package only says how each store is asked."""

from __future__ import annotations

from collections.abc import Callable

from memory.ladder import Step
from memory.levels import graph as graph_level
from memory.levels import model as model_level
from memory.levels import relational
from memory.levels import research as research_level
from memory.levels import vectors as vectors_level
from memory.levels.context import RecallContext
from memory.levels.research import StartResearch


def steps_for(ctx: RecallContext, *, start_research: StartResearch) -> list[Step]:
    """The levels that exist in this build, bound to one recall. A level that already found no
    answer to this question in a run the caller names (``previous_results``) is skipped. Level 5
    hands the question to the research job, which the verbs' layer runs: its starter comes
    in as ``start_research``."""

    def unless_done(level: int, available: Callable[[], str | None]) -> Callable[[], str | None]:
        def check() -> str | None:
            previous = ctx.previous
            reason = previous.skip_reason(level, ctx.lang) if previous is not None else None
            return reason or available()

        return check

    def always() -> str | None:
        return None

    return [
        Step(1, available=unless_done(1, always), search=lambda: relational.search(ctx)),
        Step(
            2,
            available=unless_done(2, model_level.available),
            search=lambda: model_level.search(ctx),
        ),
        Step(3, available=unless_done(3, always), search=lambda: graph_level.search(ctx)),
        Step(4, available=unless_done(4, always), search=lambda: vectors_level.search(ctx)),
        Step(
            5,
            available=unless_done(5, always),
            search=lambda: research_level.search(ctx, start_research),
        ),
    ]


__all__ = ["RecallContext", "StartResearch", "steps_for"]
