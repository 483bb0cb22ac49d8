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
