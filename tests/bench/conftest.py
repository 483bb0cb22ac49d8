"""The bench scripts make their data folders with ``tempfile`` (kept after a run by hand, so the
figures can be looked into). Run by the suite, in-process or as a subprocess, they make them
inside the test's own temporary folder, so a test run leaves nothing behind in the system's."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _bench_folders_in_the_tests_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the scripts the test starts
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the bench code run in-process
