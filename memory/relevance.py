"""How much of a question a thing holds: the rarity weights every answer rule reads (PASSPORT.md
«Поиск»).

A question's content terms are weighed by their rarity among the architect's notes (inverse
document frequency): a shared common word («любимый» in «любимый фрукт» against «любимый цвет
синий») holds little of the question, a shared rare one much of it; a term the memory has never
seen weighs the most. Function words never count: the language module drops them before any
weighing. The share held (``coverage``) feeds the answer decision for ranked notes
(``memory.decision``), and is itself the bar for things matched by name — grown tables, objects'
cards, summaries (``answers``, ``ANSWER_MIN_COVERAGE``). Below the bar a hit is a candidate: it
does not stop the ladder, and is returned ranked, as such, when nothing better exists.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db.models import Count

from memory import language
from memory import scope as scopes
from memory.ladder import Kind
from memory.models import Architect, NoteKeyword

# Words that ask for the past values, not only the current one.
HISTORY = frozenset(
    language.lemma(w) or w
    for w in (
        "раньше", "ранее", "прежде", "прежний", "прошлый", "бывший", "история", "изначально",
        "before", "previously", "former", "earlier", "history",
    )
)  # fmt: skip


# Words that announce the current value («теперь», "now"): in a note they mark a change, in a
# question they ask for what holds now. Like HISTORY, they frame a question, not its content.
CURRENT = frozenset(
    language.lemma(w) or w
    for w in ("теперь", "сейчас", "новый", "больше", "уже", "now", "new", "anymore", "longer")
)
FRAME = HISTORY | CURRENT


def asks_history(question: str) -> bool:
    """Does the question ask what was, not only what is? (The graph then keeps relations no
    longer valid, marked as history; level 1 always shows history after the current value.)"""
    return any((language.lemma(w) or w.lower()) in HISTORY for w in language.words(question))


@dataclass(frozen=True)
class TermWeights:
    """The architect's notes as the ranking sees them: how many, how long, how common each term."""

    notes: int
    average_length: float
    df: dict[str, int]
    _seen: dict[tuple[str, ...], dict[str, float]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def idf(self, term: str) -> float:
        """BM25's inverse document frequency (the always-positive form; ``IDF_SQL`` is the same
        in the statement that ranks)."""
        df = self.df.get(term, 0)
        return math.log(1.0 + (self.notes - df + 0.5) / (df + 0.5))

    def coverage(self, asked: Sequence[str], held: Iterable[str]) -> float:
        """The rarity-weighted share of ``asked`` that ``held`` contains, 0…1."""
        # Words that ask for the past or the present frame the question, not what it asks about.
        return self.shares(asked, held)[0]

    def shares(self, asked: Sequence[str], held: Iterable[str]) -> tuple[float, float, float]:
        """(coverage, missed, unseen) of ``asked`` for a thing holding ``held``: the share it
        holds; the share it lacks that other notes hold; the share no note has ever held."""
        weighed = self._weighed(tuple(asked))
        total = sum(weighed.values())
        if total <= 0:
            return 0.0, 0.0, 0.0
        held = set(held)
        covered = sum(w for t, w in weighed.items() if t in held)
        unseen = sum(w for t, w in weighed.items() if t not in held and not self.df.get(t, 0))
        return covered / total, max(0.0, (total - covered - unseen) / total), unseen / total

    def _weighed(self, asked: tuple[str, ...]) -> dict[str, float]:
        """The content terms of ``asked`` (no frame words), each with its idf; kept per
        question, since a level weighs many notes against the same one."""
        if asked not in self._seen:
            self._seen[asked] = {t: self.idf(t) for t in dict.fromkeys(asked) if t not in FRAME}
        return self._seen[asked]


# The same two rules inside SQL (level 1's one statement, ``memory.knowledge.lookup``): over a
# row ``a`` of the architect's counters and a row ``d`` of a term's document frequency.
IDF_SQL = (
    "LN(1.0 + (CAST(a.notes_count - d.df AS DOUBLE PRECISION) + 0.5)"
    " / (CAST(d.df AS DOUBLE PRECISION) + 0.5))"
)
# A float parameter, as the engine's double: PostgreSQL reads a bare ``0.3`` as NUMERIC, and
# NUMERIC arithmetic over every posting costs more than reading the posting (PASSPORT.md §18).
REAL = "CAST(%s AS DOUBLE PRECISION)"
AVERAGE_SQL = (
    f"CASE WHEN a.notes_count > 0 AND a.notes_length + {REAL} * a.notes_near_length > 0"
    f" THEN (a.notes_length + {REAL} * a.notes_near_length) / a.notes_count"
    " ELSE 1.0 END"
)  # params: NOTES_CONTEXT_WEIGHT twice


def average_length(notes: int, length: int, near_length: int) -> float:
    """The mean length BM25 normalises by: own terms plus the context's, weighted."""
    total = length + settings.NOTES_CONTEXT_WEIGHT * near_length
    return total / notes if notes and total > 0 else 1.0


def term_weights(architect: Architect, terms: Sequence[str]) -> TermWeights:
    """The architect's index statistics (kept on its row) and each term's df (one aggregate)."""
    notes, length, near = (
        Architect.objects.filter(pk=architect.pk)
        .values_list("notes_count", "notes_length", "notes_near_length")
        .get()
    )
    df: dict[str, int] = {}
    if terms:
        df = dict(
            NoteKeyword.objects.filter(architect=architect, lemma__in=list(terms), own__gt=0)
            .values("lemma")
            .annotate(n=Count("pk"))
            .values_list("lemma", "n")
        )
    return TermWeights(notes=notes, average_length=average_length(notes, length, near), df=df)


def keywords_held(
    postings: Any, owner: str, *, architect: Architect, asked: Sequence[str]
) -> dict[Any, set[str]]:
    """Which of the asked terms each thing holds, read from its keyword postings (objects'
    cards, summaries): {thing id: {lemma, …}}, only things holding at least one."""
    held: dict[Any, set[str]] = {}
    if not asked:
        return held
    rows = postings.objects.filter(architect=architect, lemma__in=list(asked))
    for thing, lemma in rows.values_list(owner, "lemma"):
        held.setdefault(thing, set()).add(lemma)
    return held


def answers(coverage: float) -> bool:
    """Does evidence with this coverage answer the question, or is it only a candidate?"""
    return coverage >= settings.ANSWER_MIN_COVERAGE


def kind_for(coverage: float) -> Kind:
    return "affirmative" if coverage >= 0.999 else "probabilistic"


def ranked_by_terms(
    records: Iterable[Any],
    *,
    asked: Sequence[str],
    held: dict[Any, set[str]],
    weights: TermWeights,
    scope: Sequence[dict[str, Any]] = (),
    limit: int,
) -> list[tuple[Any, list[str], float]]:
    """(record, the asked terms it holds, its coverage) for each record whose scope fits the
    question's (``memory.scope.fits``), best covered first and the newest first among equals:
    how level 1 ranks what is found by its keywords (objects, summaries). ``held``: each
    record's pk → the asked terms it holds."""
    hits = [
        (r, [t for t in asked if t in held[r.pk]], weights.coverage(asked, held[r.pk]))
        for r in records
        if scopes.fits(r.scope, scope)
    ]
    hits.sort(key=lambda h: (-h[2], -h[0].created_at.timestamp()))
    return hits[:limit]
