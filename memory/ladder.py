"""The depth ladder: five levels ordered by COST, not by expected quality (PASSPORT.md §4).

This module is the one place that knows the levels, the depth words callers use, who may ask
for what, and how a recall climbs: level after level, stopping at the first level that answers,
counting ``depth_used`` by what actually ran. The stores themselves live in ``memory.levels``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from memory.i18n import Text

log = logging.getLogger(__name__)

Kind = Literal["affirmative", "probabilistic", "parameter_dependent"]
KINDS: tuple[Kind, ...] = ("affirmative", "probabilistic", "parameter_dependent")

DepthWord = Literal["standard", "deep", "extreme"]


@dataclass(frozen=True)
class Level:
    """One rung: its number (inside only), its store, and its name for people."""

    number: int
    name: str
    store: str
    label: Text


# Cost of each: 1 none · 2 one model turn · 3 none · 4 embeddings only · 5 many turns.
LEVELS: tuple[Level, ...] = (
    Level(1, "tables", "tables", Text(ru="таблицы", en="tables")),
    Level(2, "model", "model", Text(ru="модель", en="model")),
    Level(3, "graph", "graph", Text(ru="граф знаний", en="knowledge graph")),
    Level(4, "vectors", "vectors", Text(ru="векторы", en="vectors")),
    Level(5, "research", "research", Text(ru="исследование", en="research")),
)

# Outside, depth is words; level numbers stay inside.
DEPTH_WORDS: tuple[DepthWord, ...] = ("standard", "deep", "extreme")
DEPTH_TOP_LEVEL: dict[DepthWord, int] = {"standard": 3, "deep": 4, "extreme": 5}
DEFAULT_DEPTH: DepthWord = "standard"

DEPTH_HINTS: dict[DepthWord, dict[str, str]] = {
    "standard": {
        "ru": "Стандарт. Память идёт сама: сначала таблицы, потом модель, потом граф знаний. "
        "Секунды. Хватает почти всегда.",
        "en": "Standard. The memory goes on its own: tables first, then the model, then the "
        "knowledge graph. Seconds. Enough almost always.",
    },
    "deep": {
        "ru": "Глубокий. Добавляется поиск по смыслу в векторной базе. Дольше и дороже — "
        "включайте, когда стандарт ничего не нашёл.",
        "en": "Deep. Adds search by meaning in the vector store. Slower and dearer — use it "
        "when standard found nothing.",
    },
    "extreme": {
        "ru": "Экстремальный. Рекурсивное исследование, до десяти минут; тратит ту же квоту "
        "подписки, что и бот. Только когда и глубокий не дал ответа.",
        "en": "Extreme. Recursive research, up to ten minutes; spends the same subscription "
        "quota as the bot. Only when deep found nothing either.",
    },
}


def depth_rank(word: DepthWord) -> int:
    return DEPTH_WORDS.index(word)


def top_level(word: DepthWord) -> int:
    return DEPTH_TOP_LEVEL[word]


@dataclass(frozen=True)
class DepthGrant:
    """The depth a recall may use: what was asked, what the caller may have, what is granted."""

    asked: DepthWord
    granted: DepthWord
    cap: DepthWord | None

    @property
    def capped(self) -> bool:
        return self.granted != self.asked

    @property
    def top_level(self) -> int:
        return top_level(self.granted)


def grant_depth(asked: DepthWord, cap: DepthWord | None) -> DepthGrant:
    """Levels 4–5 must tell a human's demand from a model's wish (PASSPORT.md §4, fork 2).

    A memory key carries a maximum depth; a signed-in architect has none (``cap=None``).
    Asking above the cap is not an error: the request runs at the cap and says so.
    """
    if cap is not None and depth_rank(asked) > depth_rank(cap):
        return DepthGrant(asked=asked, granted=cap, cap=cap)
    return DepthGrant(asked=asked, granted=asked, cap=cap)


# --- climbing --------------------------------------------------------------------------------


@dataclass
class ReportEntry:
    """What one store (or one table of it) returned at one level."""

    level: int
    store: str
    source: str
    status: Literal["answered", "empty", "skipped", "failed", "running"]
    returned: int = 0
    kind: Kind | None = None
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "store": self.store,
            "source": self.source,
            "status": self.status,
            "returned": self.returned,
            "kind": self.kind,
            "note": self.note,
        }


@dataclass
class Outcome:
    """What a level produced. ``found`` decides whether the climb stops here."""

    found: bool
    kind: Kind | None = None
    form: Literal["text", "data", "object"] = "text"
    text: str = ""
    data: Any = None
    object: dict[str, Any] | None = None
    report: list[ReportEntry] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    missing: list[dict[str, str]] = field(default_factory=list)
    usage: Any = None  # memory.model.base.ModelResult when a model was called
    thread: str = ""
    tools: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    # Hits below the answer bar (memory.relevance), best first: they never stop the climb, and
    # are returned, fused across levels, when no level answers.
    candidates: list[dict[str, Any]] = field(default_factory=list)
    # The rows of an answer computed from the tables (level 2): the relearning cycle keeps them
    # as a table artifact, so the same computation is not paid for twice.
    computed: list[dict[str, Any]] | None = None


@dataclass
class Step:
    """One level as the recall sees it: is it usable now, and if so, what does it say."""

    number: int
    available: Callable[[], str | None]  # None when usable, else the reason it is skipped
    search: Callable[[], Outcome]


@dataclass
class Climb:
    depth_used: int
    final: Outcome | None
    report: list[ReportEntry]
    trace: list[dict[str, Any]]
    outcomes: list[Outcome]
    seconds_by_level: dict[int, float]

    def candidates(self, limit: int = 10, exclude: set[str] = frozenset()) -> list[dict[str, Any]]:  # type: ignore[assignment]
        """Every level's candidates, one entry per item, the answering level's own items
        (``exclude``) left out. The hybrid level's list (level 4 fuses level 1's terms with the
        vectors, by score) comes first as it is; the other levels' lists are fused by
        reciprocal rank (k=60) after it: fusing level 4's list again with level 1's, by rank,
        counted the terms twice and lost recall (bench/retrieval.py --ranking: 0.766 against
        0.857 at 10 on LoCoMo; PASSPORT.md «Поиск»)."""
        others = [o for o in self.outcomes if o is not self.final]
        hybrid = [
            c for o in others if o.report and o.report[0].level == HYBRID for c in o.candidates
        ]
        lists = [
            (CANDIDATE_WEIGHTS.get(o.report[0].level if o.report else 0, 1.0), o.candidates)
            for o in others
            if not (o.report and o.report[0].level == HYBRID)
        ]
        fused = fuse(lists, limit=limit + len(exclude) + len(hybrid))
        out, seen = [], set(exclude)
        for item in [*hybrid, *fused]:
            key = str(item.get("note") or item["id"])
            if key not in seen:
                seen.add(key)
                out.append(item)
        return out[:limit]


RRF_K = 60
HYBRID = 4  # the level whose ranking already fuses the terms with the meaning
# How much each level's candidate list counts when they are fused: the graph's sources are few
# and chosen by entity, the full-text and hybrid lists are ranked over every note
# (bench/retrieval.py measured the choice; PASSPORT.md «Поиск»).
CANDIDATE_WEIGHTS: dict[int, float] = {1: 1.0, 3: 0.5, 4: 1.0}


def fuse(
    ranked_lists: Sequence[tuple[float, Sequence[dict[str, Any]]]], *, limit: int
) -> list[dict[str, Any]]:
    """Weighted reciprocal rank fusion of ranked lists whose items carry an ``id``; the first
    list's copy of an item is kept. The fused score is returned as ``fused``."""
    scores: dict[str, float] = {}
    items: dict[str, dict[str, Any]] = {}
    for weight, ranked in ranked_lists:
        for rank, item in enumerate(ranked, 1):
            key = str(item["id"])
            scores[key] = scores.get(key, 0.0) + weight / (RRF_K + rank)
            items.setdefault(key, item)
    order = sorted(scores, key=lambda k: -scores[k])[:limit]
    return [{**items[k], "fused": round(scores[k], 5)} for k in order]


_NOT_BUILT = Text(ru="не построен", en="not built yet")


def climb(steps: Sequence[Step], *, top: int, lang: str) -> Climb:
    """Run levels in cost order up to ``top``; stop at the first that answers.

    ``depth_used`` is the highest level whose search actually ran — never the level asked for.
    A level that is not built or not configured is reported as skipped with its reason.
    """
    by_number = {step.number: step for step in steps}
    report: list[ReportEntry] = []
    trace: list[dict[str, Any]] = []
    outcomes: list[Outcome] = []
    seconds: dict[int, float] = {}
    depth_used = 0
    for level in LEVELS:
        if level.number > top:
            break
        step = by_number.get(level.number)
        reason = _NOT_BUILT(lang) if step is None else step.available()
        if reason is not None:
            report.append(
                ReportEntry(level.number, level.store, level.name, "skipped", note=reason)
            )
            trace.append({"level": level.number, "event": "skipped", "reason": reason})
            continue
        assert step is not None
        started = time.perf_counter()
        try:
            outcome = step.search()
        except Exception as error:  # one level's fault never sinks the recall: it is reported
            log.exception("level %s failed", level.number)
            reason = f"{getattr(error, 'code', type(error).__name__)}: {error}"[:1000]
            outcome = Outcome(
                found=False,
                report=[ReportEntry(level.number, level.store, level.name, "failed", note=reason)],
                trace=[{"level": level.number, "event": "failed", "reason": reason}],
            )
        seconds[level.number] = round(time.perf_counter() - started, 4)
        depth_used = level.number
        outcomes.append(outcome)
        report.extend(outcome.report)
        trace.extend(outcome.trace)
        if outcome.found:
            return Climb(depth_used, outcome, report, trace, outcomes, seconds)
    return Climb(depth_used, None, report, trace, outcomes, seconds)
