"""Scope: where and when a statement holds (PASSPORT.md §7).

Two dimensions only — calendar and geo. An empty scope means "unknown where and when", never
"everywhere, always". No inheritance ladders: a place key matches itself only (Madrid does not
rise to Spain), and a day matches the periods and deadlines that contain it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date
from typing import Any, Literal

from memory.i18n import Text

Dimension = Literal["geo", "calendar"]
DIMENSIONS: tuple[Dimension, ...] = ("geo", "calendar")


def _interval(record: dict[str, Any]) -> tuple[date, date]:
    if "date" in record:
        day = date.fromisoformat(record["date"])
        return day, day
    if "deadline" in record:
        return date.min, date.fromisoformat(record["deadline"])
    return date.fromisoformat(record["start"]), date.fromisoformat(record["end"])


def records(scope: Sequence[dict[str, Any]], dimension: Dimension) -> list[dict[str, Any]]:
    kind = "geo" if dimension == "geo" else "calendar"
    return [r for r in scope if r.get("kind") == kind]


def _matches(stored: dict[str, Any], asked: dict[str, Any]) -> bool:
    if stored["kind"] == "geo":
        return stored["place"] == asked["place"]
    (a0, a1), (b0, b1) = _interval(stored), _interval(asked)
    return a0 <= b1 and b0 <= a1


def fits(stored: Sequence[dict[str, Any]], asked: Sequence[dict[str, Any]]) -> bool:
    """Does a statement with scope ``stored`` hold for a question with scope ``asked``?

    On each dimension the question names, a statement bound on that dimension must match one
    of the question's records (exact keys: Madrid is not Spain); a statement not bound on it is
    not excluded — unknown, not false (see ``unknown``).
    """
    for dimension in DIMENSIONS:
        wanted = records(asked, dimension)
        bound = records(stored, dimension)
        if wanted and bound and not any(_matches(s, a) for s in bound for a in wanted):
            return False
    return True


def unknown(stored: Sequence[dict[str, Any]], asked: Sequence[dict[str, Any]]) -> list[Dimension]:
    """Dimensions the question names on which the statement is not bound: it may hold there or
    not — unknown, so such a statement answers only as ``parameter_dependent``."""
    return [d for d in DIMENSIONS if records(asked, d) and not records(stored, d)]


def missing(
    stored_scopes: Iterable[Sequence[dict[str, Any]]], asked: Sequence[dict[str, Any]]
) -> list[Dimension]:
    """Dimensions the answer depends on but the question did not give."""
    stored_scopes = list(stored_scopes)
    return [
        dimension
        for dimension in DIMENSIONS
        if not records(asked, dimension) and any(records(s, dimension) for s in stored_scopes)
    ]


def describe(record: dict[str, Any]) -> str:
    if record["kind"] == "geo":
        return record["place"]
    if "date" in record:
        return record["date"]
    if "deadline" in record:
        return f"≤{record['deadline']}"
    return f"{record['start']}…{record['end']}"


# --- how the stores keep and filter scope ----------------------------------------------------
# Every store keeps a statement's scope records as they are and, for its own index, the place
# keys flattened (``places``). A store narrows its query to the statements that may fit —
# unbound on geo, or bound to one of the asked places — and ``fits`` has the last word, so a
# store's coarse filter can never let through what the rule excludes.


def places(scope: Sequence[dict[str, Any]]) -> list[str]:
    """The place keys a statement is bound to (what a store indexes)."""
    return sorted({r["place"] for r in records(scope, "geo")})


def asked_places(asked: Sequence[dict[str, Any]]) -> list[str] | None:
    """The place keys a statement bound on geo must have one of, or None when any may fit."""
    wanted = places(asked)
    return wanted or None


def span(scope: Sequence[dict[str, Any]]) -> tuple[date, date] | None:
    """The days a statement's calendar records cover, from the first to the last (what a store
    indexes), or None when it is not bound on the calendar. A coarse envelope: ``fits`` decides."""
    days = [_interval(r) for r in records(scope, "calendar")]
    if not days:
        return None
    return min(d[0] for d in days), max(d[1] for d in days)


def flat_places(scope: Sequence[dict[str, Any]]) -> str:
    """The place keys as one text a SQL ``LIKE`` can test: "|madrid|sevilla|", or "" unbound."""
    keys = places(scope)
    return f"|{'|'.join(keys)}|" if keys else ""


# What an answer says about scope, on every level alike.
_DEPENDS = {
    "geo": Text(
        ru="Ответ зависит от места, а место неизвестно: заметки привязаны к {values}.",
        en="The answer depends on the place, and the place is unknown: the notes are bound to {values}.",
    ),
    "calendar": Text(
        ru="Ответ зависит от даты, а дата неизвестна: заметки привязаны к {values}.",
        en="The answer depends on the date, and the date is unknown: the notes are bound to {values}.",
    ),
}
_UNKNOWN = {
    "geo": Text(
        ru="Место, где это верно, не записано; спрошено про {asked}: может быть верно и не там.",
        en="Where this holds was never said; the question is about {asked}: it may not hold there.",
    ),
    "calendar": Text(
        ru="Когда это верно, не записано; спрошено про {asked}: может быть верно и не тогда.",
        en="When this holds was never said; the question is about {asked}: it may not hold then.",
    ),
}


def scope_missing(
    answer_scopes: list[list[dict[str, Any]]],
    asked: Sequence[dict[str, Any]],
    *,
    lang: str,
    unknown: list[str],
) -> list[dict[str, str]]:
    """What an answer must name about scope, on every level alike: the dimensions its
    statements are bound on that the question (``asked``) does not give, and (``unknown``) those
    the question gives that its best statement is not bound on. Either makes it
    parameter_dependent."""
    out = []
    for dimension in missing(answer_scopes, asked):
        values = sorted({describe(r) for s in answer_scopes for r in records(s, dimension)})
        why = _DEPENDS[dimension](lang, values=", ".join(values))
        out.append({"parameter": "scope", "dimension": dimension, "why": why})
    for dimension in unknown:
        said = ", ".join(describe(r) for r in records(asked, dimension))  # type: ignore[arg-type]
        why = _UNKNOWN[dimension](lang, asked=said)
        out.append({"parameter": "scope", "dimension": dimension, "why": why})
    return out
