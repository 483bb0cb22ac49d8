"""The evaluation data the benches read from ../shared/data beside the checkout (never copied in).

A fresh `git clone` has no ../shared beside it: the tests that need a file from there skip,
naming the file. CI lays shared/ beside its clone, so there they run; were the file missing under
CI (CI=true), they fail instead, so a lost copy of shared/ never turns them into silent skips.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from common import LOCOMO  # noqa: E402  (bench/common.py: the one place its path is spelled)

__all__ = ["LOCOMO", "require"]


def require(path: Path) -> None:
    """Skip the calling test when ``path`` (a file under ../shared/data) is missing; fail in CI."""
    if path.is_file():
        return
    why = f"needs {path} (../shared/data beside the checkout), which is missing"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{why}; CI must have shared/ beside its clone")
    pytest.skip(why)
