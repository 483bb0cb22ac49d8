"""The ladder's rules, on steps that count their own calls."""

from __future__ import annotations

from memory import ladder
from memory.ladder import Outcome, ReportEntry, Step


def _step(number: int, found: bool, calls: list[int], available: str | None = None) -> Step:
    def search() -> Outcome:
        calls.append(number)
        return Outcome(
            found=found,
            kind="affirmative" if found else None,
            report=[ReportEntry(number, "s", "s", "answered" if found else "empty")],
        )

    return Step(number, available=lambda: available, search=search)


def test_it_stops_at_the_first_level_that_answers():
    calls: list[int] = []
    result = ladder.climb(
        [_step(1, False, calls), _step(2, True, calls), _step(3, True, calls)], top=3, lang="en"
    )
    assert calls == [1, 2]
    assert result.depth_used == 2
    assert result.final is not None


def test_depth_used_counts_what_ran_not_what_was_allowed():
    calls: list[int] = []
    result = ladder.climb([_step(1, False, calls)], top=5, lang="en")
    assert result.depth_used == 1
    assert [e.status for e in result.report] == [
        "empty",
        "skipped",
        "skipped",
        "skipped",
        "skipped",
    ]


def test_an_unavailable_level_is_skipped_with_its_reason_and_does_not_count():
    calls: list[int] = []
    result = ladder.climb(
        [_step(1, False, calls), _step(2, True, calls, available="no model")], top=3, lang="en"
    )
    assert calls == [1]
    assert result.depth_used == 1
    assert result.report[1].note == "no model"


def test_it_never_climbs_above_the_granted_level():
    calls: list[int] = []
    ladder.climb([_step(n, False, calls) for n in range(1, 6)], top=3, lang="en")
    assert calls == [1, 2, 3]


def test_a_key_cap_lowers_the_depth_and_a_browser_has_none():
    assert ladder.grant_depth("extreme", "standard").granted == "standard"
    assert ladder.grant_depth("deep", "extreme").granted == "deep"
    assert ladder.grant_depth("extreme", None).granted == "extreme"
    assert ladder.grant_depth("extreme", None).top_level == 5
