"""bench/relearning.py's level 5 run in the suite: each question researched once at extreme
(the project's fake `claude` names the related terms) is answered at level 1 the second time,
at no model cost. On the test database, so leg 2 runs it on PostgreSQL."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import relearning  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("grown")]


def test_a_researched_question_costs_no_model_turn_the_second_time():
    rows = relearning.measure_research()["rows"]
    # Measured 2026-12-04: all 3 researched (2 turns, ~2 s each), all 3 at level 1 after (0 turns).
    assert len(rows) >= 2
    for row in rows:
        assert row["first"]["level"] == 5 and row["first"]["found"] and row["kept"]
        assert row["first"]["turns"] >= 2  # level 2's call and the research's terms
        assert row["second"]["found"] and row["second"]["level"] <= 3
        assert row["second"]["turns"] == 0 and row["second"]["tokens"] == 0
    first = sum(r["first"]["seconds"] for r in rows)
    second = sum(r["second"]["seconds"] for r in rows)
    assert first > 10 * second


def test_a_graph_answer_is_kept_from_level_3_and_paid_again_from_level_4(tmp_path):
    facts = [
        "Мой брат Антон работает хирургом в областной больнице.",
        "Моя дочь Вера учится играть на виолончели.",
        "Я не переношу кинзу и всегда прошу убрать её из блюд.",
    ]
    corpus = {
        "facts": [{"id": f"f{i}", "text": t} for i, t in enumerate(facts)],
        "cases": [
            {
                "kind": "joined",
                "question": "Где работает Антон и на чём учится играть Вера?",
                "expect": ["f0", "f1"],
            }
        ],
    }
    path = tmp_path / "joined.json"
    path.write_text(json.dumps(corpus, ensure_ascii=False))
    paid, kept = (relearning.measure_level3(level, path)["rows"] for level in (4, 3))
    assert [(r["kept"], r["second"]["level"]) for r in paid] == [(False, 3)]
    assert [(r["kept"], r["second"]["level"]) for r in kept] == [(True, 1)]
    assert kept[0]["second_right"] and kept[0]["second"]["turns"] == 0
