"""The notes-threshold bench has a complete personal corpus and prints a usable floor."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FACTS = ROOT / "bench" / "notes_corpus" / "facts.json"


def has_cyrillic(text: str) -> bool:
    return any("\u0400" <= ch <= "\u04ff" for ch in text)


def test_notes_corpus_is_complete():
    corpus = json.loads(FACTS.read_text(encoding="utf-8"))
    facts = corpus["facts"]
    assert len(facts) >= 40
    ids = [f["id"] for f in facts]
    assert len(set(ids)) == len(ids)
    texts = [f["text"] for f in facts]
    assert len(set(texts)) == len(texts)
    questions = []
    for fact in facts:
        assert fact["text"].strip(), fact["id"]
        assert len(fact["questions"]) >= 2, fact["id"]
        assert all(q.strip() for q in fact["questions"]), fact["id"]
        questions += fact["questions"]
    assert sum(not has_cyrillic(q) for q in questions) * 5 >= len(facts)  # one English per 5 facts
    unrelated = corpus["unrelated"]
    assert len(unrelated) >= 30
    assert all(u["question"].strip() and u["kind"] in {"personal", "general"} for u in unrelated)
    everything = questions + [u["question"] for u in unrelated]
    assert len(set(everything)) == len(everything)


@pytest.mark.slow
def test_notes_threshold_bench_prints_a_floor():
    result = subprocess.run(
        [sys.executable, "bench/notes_threshold.py", "--skip-locomo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("chosen floor:")]
    assert len(lines) == 1, result.stdout
    match = re.fullmatch(r"chosen floor: (\d+\.\d+)", lines[0].strip())
    assert match, lines[0]
    assert 0.5 < float(match.group(1)) < 1.0
