"""Summaries as level 1 reads them: the ones whose question or text holds the asked terms, and
the card an answer shows. The relearning cycle (``memory.services.relearning``) writes them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memory import language
from memory.models import Architect, Summary, SummaryKeyword
from memory.relevance import TermWeights, keywords_held, ranked_by_terms

# --- level 1 reads them --------------------------------------------------------------------------


@dataclass
class SummaryHit:
    summary: Summary
    matched: list[str]
    coverage: float


def summaries_search(
    *,
    architect: Architect,
    terms: Sequence[str],
    weights: TermWeights,
    scope: Sequence[dict[str, Any]],
    limit: int = 5,
    held: dict[Any, set[str]] | None = None,
) -> list[SummaryHit]:
    """Summaries whose question or text holds the question's terms, best covered by the words
    of the question each was kept for first (the newest first among equals); the scope by its
    one rule. ``held``: the asked terms each summary holds, when already read (level 1's one
    look).
    A kept answer answers the question it was kept for, and that question's rewordings: the
    words of the answer it gave are its facts', which answer through their own notes, and a
    question put together from both («код от сейфа у родителей» from «код на двери у
    родителей» answered with a safe's code) was never asked nor told (bench/relearning.py)."""
    asked = list(dict.fromkeys(terms))
    if held is None:
        held = keywords_held(SummaryKeyword, "summary_id", architect=architect, asked=asked)
    if not held:
        return []
    found = list(Summary.objects.answering().filter(architect=architect, pk__in=list(held)))
    own = {s.pk: held[s.pk] & set(language.keywords(s.question)) for s in found}
    ranked = ranked_by_terms(
        found, asked=asked, held=own, weights=weights, scope=scope, limit=limit
    )
    return [SummaryHit(summary=s, matched=m, coverage=c) for s, m, c in ranked]


def card(summary: Summary) -> dict[str, Any]:
    """A summary as an answer shows it: its text, the run that found it, its basis, its object."""
    return {
        "id": f"summaries:{summary.pk}",
        "summary": str(summary.pk),
        "source": "summaries",
        "text": summary.text,
        "question": summary.question,
        "run": str(summary.run_id) if summary.run_id else None,
        "level": summary.level,
        "object": str(summary.object_id) if summary.object_id else None,
        "basis": summary.basis,
        "claim": summary.claim,
        "denies_run": str(summary.denied_run_id) if summary.denied_run_id else None,
        "created_at": summary.created_at.isoformat(),
    }
