"""What the benches share: a Django set up on a throwaway data folder, and small formatting."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"  # read there, never copied


def locomo_questions() -> list[str]:
    """Every LoCoMo question, in the file's order."""
    import json

    samples = json.loads(LOCOMO.read_text())
    return [qa["question"] for sample in samples for qa in sample.get("qa", [])]


def setup_django(prefix: str) -> None:
    """Django on a fresh data folder, one OpenMP thread (the embedder's measured setting)."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "memory.settings"
    os.environ["MEMORY_DATA_DIR"] = tempfile.mkdtemp(prefix=f"memory-bench-{prefix}-")
    os.environ["OMP_NUM_THREADS"] = "1"
    # Retrieval benches ask right after telling: the stores are filled in the request. The
    # capture-first path (answer first, stores behind) is measured by its own bench.
    os.environ.setdefault("STORES_FILL", "inline")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def has_cyrillic(text: str) -> bool:
    return any("\u0400" <= ch <= "\u04ff" for ch in text)


def pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile (0–100) of the values, nearest rank; NaN for none."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def timed(fn, n: int, warmup: int = 3) -> list[float]:  # type: ignore[no-untyped-def]
    """Milliseconds of ``n`` calls of ``fn`` after ``warmup`` unmeasured ones."""
    import time

    for _ in range(warmup):
        fn()
    out = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        out.append((time.perf_counter() - started) * 1000)
    return out
