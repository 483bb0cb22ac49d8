"""Did the memory find the answer? One decision, fitted on data, for every level that ranks notes.

A level ranks notes; ranking is not deciding. The level's list stays as ranked, and whether it
holds the answer — ``found`` — is a probability computed from the evidence the ladder already
has about the list's first note (``Evidence``), compared with a threshold. The probability is a
logistic model whose few coefficients live in settings (``ANSWER_MODELS``) with their
provenance: ``bench/decision.py`` fits them on one half of its sets and reports the other half,
with the curve over the threshold (PASSPORT.md «Поиск»).

Two models, one per kind of evidence:
- ``words`` (levels 1 and 3): how much of the question the first note holds itself, weighed by
  rarity (``coverage``); how much it lacks of what the memory holds elsewhere (``missed``: a
  word told about something else says the question is about that other thing); how much of the
  question the memory has never heard (``unseen``: other words for the same thing, or a thing
  never told); the most any of the first three notes holds (``best_coverage``).
- ``meaning`` (level 4) adds the first note's dense similarity and where it stands in its list:
  e5 scores are bunched (a right note ≈ 0.85, a wrong one ≈ 0.80), so the margins over the list's
  median and over the best other note say more than the value alone; whether the vectors put it
  first too (two independent rankers agreeing); how much its context vector (read after the
  note told before it) beats its own (a neighbour's words lifting it); and ``pull``: what the
  words of the question the note does not hold add to its similarity, against what they add to
  the other nearest notes. Other words for the same thing pull towards the note («лечит зубы»
  towards «стоматолог»); a question about something never told beside it does not («ширина
  проезжей части» beside the note on the bridge's span pulls towards other notes as much or more).

Pure: no store is read here; the levels pass what they already hold.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from django.conf import settings

Model = Literal["words", "meaning"]


@dataclass(frozen=True)
class Evidence:
    """What the ladder knows of one ranked note for one question (features of ``probability``)."""

    coverage: float  # rarity-weighted share of the question the note holds itself, 0…1
    missed: float  # share in terms the memory holds elsewhere but this note lacks, 0…1
    unseen: float  # share in terms the memory has never seen, 0…1
    best_coverage: float  # the most of the question any of the first three notes holds
    similarity: float = 0.0  # own dense similarity (level 4)
    over_median: float = 0.0  # similarity − the median of the dense list
    gap: float = 0.0  # similarity − the best other similarity in the list
    dense_first: float = 0.0  # 1 when the vectors rank it first too
    context_gain: float = 0.0  # max(0, context similarity − own similarity)
    pull: float = 0.0  # what the words the note lacks add to it, less their most to another

    def as_dict(self) -> dict[str, float]:
        return {k: round(v, 4) for k, v in asdict(self).items()}


FEATURES: dict[Model, tuple[str, ...]] = {
    "words": ("coverage", "missed", "unseen", "best_coverage"),
    "meaning": (
        "coverage", "missed", "unseen", "best_coverage", "similarity", "over_median", "gap",
        "dense_first", "context_gain", "pull",
    ),
}  # fmt: skip


DECIDED = 3  # the first notes of a ranked list the decision reads (it answers for them)


def words_evidence(weights: Any, asked: Sequence[str], held: Sequence[Iterable[str]]) -> Evidence:
    """The evidence of the words (levels 1, 3 and 4, and the benches that rebuild them): what the
    first note of a ranked list holds of ``asked`` itself (``held``: each listed note's terms,
    in rank order, weighed by ``memory.relevance.TermWeights``), and the most any of the first
    ``DECIDED`` holds."""
    held = [set(h) for h in held]
    coverage, missed, unseen = weights.shares(asked, held[0] if held else set())
    best = max((weights.shares(asked, h)[0] for h in held[:DECIDED]), default=0.0)
    return Evidence(
        coverage=coverage, missed=missed, unseen=unseen, best_coverage=max(best, coverage)
    )


def dense_evidence(
    similarities: Sequence[float], similarity: float | None, context: float | None
) -> dict[str, float]:
    """The meaning features of one note in a dense list (best first). A note the vectors did
    not return gets the last similarity read as its bound."""
    if not similarities:
        return {}
    own = similarity if similarity is not None else similarities[-1]
    others = list(similarities)
    if similarity is not None and similarity in others:
        others.remove(similarity)
    best_other = max(others, default=own)
    return {
        "similarity": own,
        "over_median": own - statistics.median(similarities),
        "gap": own - best_other,
        "dense_first": 1.0 if similarity is not None and similarity >= similarities[0] else 0.0,
        "context_gain": max(0.0, (context or 0.0) - own) if context is not None else 0.0,
    }


def pull(whole: Sequence[float], without: Sequence[float], position: int | None) -> float:
    """What the words a note does not hold do for it (the feature ``pull``): the similarity
    each of the nearest notes loses when those words leave the question (``whole``: the
    question's similarities, ``without``: the same notes' to the question without them,
    ``memory.language.without_unheld_words``), the note's loss less the most any other note
    loses. Above 0, the words point at this note more than at any other; 0 when the note is
    not among the nearest, when there are no others, or when it holds every word."""
    if position is None or len(whole) < 2:
        return 0.0
    lost = [a - b for a, b in zip(whole, without, strict=True)]
    return float(lost[position] - max(v for i, v in enumerate(lost) if i != position))


def _model(name: Model) -> Mapping[str, Any]:
    return settings.ANSWER_MODELS[name]


def probability(evidence: Evidence, model: Model) -> float:
    """P(the list holds the answer, in its first three) under the fitted model."""
    fitted = _model(model)
    z = fitted["intercept"] + sum(
        fitted["coefficients"][name] * getattr(evidence, name) for name in FEATURES[model]
    )
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


def threshold(model: Model) -> float:
    return float(_model(model)["threshold"])


def answers(evidence: Evidence, model: Model) -> bool:
    return probability(evidence, model) >= threshold(model)


def verdict(evidence: Evidence, model: Model, unheld: Sequence[str] = ()) -> dict[str, Any]:
    """What the trace shows of one decision: the model, its features, p and the threshold.
    ``unheld``: the kinds of value the question asks for that the note decided on
    does not hold (``memory.language.unheld``, read by the level): then it does not answer,
    whatever the words and the meaning say — every other word of «Какой телефон у Ирины?» may
    be in a note about Irina that has no phone."""
    p = probability(evidence, model)
    features = evidence.as_dict()
    return {
        "model": model,
        "features": {name: features[name] for name in FEATURES[model]},
        "p": round(p, 4),
        "threshold": threshold(model),
        "unheld": list(unheld),
        "answers": p >= threshold(model) and not unheld,
    }
