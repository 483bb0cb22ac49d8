"""The objects-threshold bench runs on its corpus and prints a usable threshold."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "bench" / "objects_corpus"


def test_objects_corpus_is_complete():
    objects = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))
    assert len(objects) >= 30
    names = [o["name"] for o in objects]
    assert len(set(names)) == len(names)
    for obj in objects:
        assert obj["description"].strip(), obj["name"]
        assert len(obj["queries"]) >= 3, obj["name"]
        assert all(q.strip() for q in obj["queries"]), obj["name"]
        if obj["file"] is not None:
            path = CORPUS / "files" / obj["file"]
            assert path.is_file(), path
            path.read_text(encoding="utf-8")
    assert sum(o["file"] is not None for o in objects) >= 30


@pytest.mark.slow
def test_objects_threshold_bench_prints_a_threshold():
    result = subprocess.run(
        # A smoke run on a few objects keeps the bench from rotting; the full measurement is
        # `bench/objects_threshold.py` by hand, and its figures are in PASSPORT.md.
        [sys.executable, "bench/objects_threshold.py", "--limit", "8"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("chosen threshold:")]
    assert len(lines) == 1, result.stdout
    match = re.fullmatch(r"chosen threshold: (\d+\.\d+)", lines[0].strip())
    assert match, lines[0]
    assert 0.5 < float(match.group(1)) < 1.0
