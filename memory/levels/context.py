"""One recall as the levels see it: built in one place (``RecallContext.of``), read by every level."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memory import language
from memory.levels.previous import Previous
from memory.models import Architect, Research, Run
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
    # What the caller said besides the question.
    previous: Previous | None = None  # ``previous_results``, read
    wait: bool = False  # hold the answer until the research job ends (level 5)
    # What a shadow replay must not see: items learned since the request it replays was asked.
    unseen: frozenset[str] = frozenset()
    # What a level leaves for the levels above it and for the verb.
    weighed: TermWeights | None = None  # the question's terms weighed (level 1's one look)
    level1_notes: list[dict[str, Any]] = field(default_factory=list)  # shown, for level 2
    level1_ranked: list[dict[str, Any]] = field(default_factory=list)  # ranked, for level 4
    research: Research | None = None  # the job level 5 started or found

    @classmethod
    def of(
        cls,
        *,
        architect: Architect,
        text: str,
        scope: Sequence[dict[str, Any]] | None,
        lang: str,
        run: Run | None = None,
        previous: Previous | None = None,
        wait: bool = False,
        unseen: frozenset[str] = frozenset(),
    ) -> RecallContext:
        """The one constructor: the question's keywords come from its text, by the language
        module, here only — a word the dictionary reads two ways is read as the memory knows it
        (``as_the_memory_knows``)."""
        keywords = language.keywords(text)
        keywords, weighed = as_the_memory_knows(architect, keywords, language.other_readings(text))
        return cls(
            architect=architect,
            text=text,
            keywords=keywords,
            scope=list(scope or []),
            lang=lang,
            run=run,
            previous=previous,
            wait=wait,
            unseen=unseen,
            weighed=weighed,
        )

    @property
    def research_named(self) -> Research | None:
        """The job a run the caller names already started for this question (level 5 reports
        it instead of starting another)."""
        return self.previous.research if self.previous is not None else None

    def excluded(self, item: Any) -> bool:
        """Did the caller already get this item (``previous_results``)? Or is it something a
        shadow replay must not see: what was learned since the request it replays was asked."""
        if self.unseen:
            keys = (
                {item}
                if isinstance(item, str)
                else {str(item.get(k) or "") for k in ("note", "id")}
            )
            if keys & self.unseen:
                return True
        return self.previous is not None and self.previous.excludes(item)

    def weights(self) -> TermWeights:
        """The question's terms weighed against the architect's notes, computed once."""
        if self.weighed is None:
            self.weighed = term_weights(self.architect, self.keywords)
        return self.weighed


def as_the_memory_knows(
    architect: Architect, keywords: list[str], others: dict[str, list[str]]
) -> tuple[list[str], TermWeights | None]:
    """The question's keywords, a word the dictionary reads two ways taken in the reading the
    memory holds: a keyword no note holds is replaced by its other reading that notes do hold
    (the most held) — «Как дозвониться до сантехника?» asks for «сантехник» in a memory that
    knows the plumber and not the plumbing. Weighed in level 1's one look (``term_weights``,
    all the readings in it), which is returned for the context to keep; None and the keywords
    as they are when no keyword has another reading."""
    if not any(k in others for k in keywords):
        return keywords, None
    readings = [r for k in keywords for r in others.get(k, [])]
    weighed = term_weights(architect, list(dict.fromkeys(keywords + readings)))
    chosen = []
    for keyword in keywords:
        held = [r for r in others.get(keyword, []) if weighed.df.get(r, 0) > 0]
        if weighed.df.get(keyword, 0) == 0 and held:
            keyword = max(held, key=lambda r: weighed.df[r])
        if keyword not in chosen:
            chosen.append(keyword)
    return chosen, weighed
