"""The bench scripts run (tiny sizes), so they do not rot between measurements."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_level1_bench_runs_and_prints_ratios():
    result = subprocess.run(
        [
            sys.executable,
            "bench/level1.py",
            "--engine",
            "sqlite",
            "--sizes",
            "200",
            "--repeats",
            "3",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.strip().startswith("200")]
    assert len(lines) == 1
    assert lines[0].count("/") == 3  # three p50/p95 pairs
