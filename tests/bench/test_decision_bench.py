"""bench/decision.py judges a question the way the ladder does: a level whose note lacks the
value the question asks for by name does not answer, whatever its model says
(``memory.decision.verdict``), so the thresholds it chooses and the figures it prints are the
product's, not those of a decision without the veto."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import decision  # noqa: E402

pytestmark = pytest.mark.engine_free

SURE = {"intercept": 10.0, "coefficients": {"coverage": 1.0}, "threshold": 0.5}
MODELS = {"words": SURE, "meaning": SURE}


def _question(unheld_1: bool, unheld_4: bool) -> dict:
    row = {"features": {"coverage": 1.0}, "first": True, "top3": True, "returned": True}
    return {
        "set": "ru",
        "id": "q",
        "kind": "nearmiss",
        "answerable": False,
        "levels": {1: {**row, "unheld": unheld_1}, 4: {**row, "unheld": unheld_4}},
    }


def test_a_level_whose_note_lacks_the_asked_value_does_not_answer():
    assert decision.decide(_question(False, False), MODELS)["level"] == 1
    assert decision.decide(_question(True, False), MODELS)["level"] == 4
    assert decision.decide(_question(True, True), MODELS)["found"] is False


def test_evidence_dumped_before_the_veto_was_recorded_is_read_as_held():
    question = _question(False, False)
    for row in question["levels"].values():
        del row["unheld"]
    assert decision.decide(question, MODELS)["found"] is True


def test_the_false_found_it_reports_counts_the_veto():
    never_told = [_question(True, True), _question(False, False)]
    assert decision.report(never_told, MODELS)["ru"]["false_found"] == 0.5


def test_the_meaning_threshold_is_the_lowest_that_keeps_false_found_within_the_bar():
    """``--fit meaning``: the words model keeps its threshold; the meaning one takes the lowest
    at which the ladder finds at most MAX_FALSE_FOUND of the never told."""
    never_told = []
    for i in range(40):
        row = {"features": {"coverage": i / 40}, "first": False, "top3": False, "returned": False}
        never_told.append(
            {
                "set": "ru",
                "id": f"q{i}",
                "kind": "nearmiss",
                "answerable": False,
                "levels": {4: row},
            }
        )
    rising = {"intercept": -5.0, "coefficients": {"coverage": 10.0}, "threshold": 0.5}
    models = {"words": {**SURE, "threshold": 0.77}, "meaning": rising}
    chosen = decision.choose_thresholds(never_told, models, ("meaning",))
    assert chosen["words"]["threshold"] == 0.77

    def false_found(threshold: float) -> float:
        trial = decision._with(chosen, "meaning", threshold)
        return decision.report(never_told, trial)["ru"]["false_found"]

    threshold = chosen["meaning"]["threshold"]
    assert false_found(threshold) <= decision.MAX_FALSE_FOUND
    assert false_found(round(threshold - 0.01, 2)) > decision.MAX_FALSE_FOUND
