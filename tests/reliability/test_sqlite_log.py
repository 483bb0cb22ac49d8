"""SQLite as the memory opens it: the write-ahead log, and the mark at which a writer copies the
log back into the database (``SQLITE_WAL_PAGES``; PASSPORT.md §18 has the measurement)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_every_connection_keeps_a_write_ahead_log_with_the_checkpoint_mark():
    if connection.vendor != "sqlite":
        pytest.skip("a SQLite connection's settings; this run is on PostgreSQL")
    with connection.cursor() as cursor:
        assert cursor.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert cursor.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 10000


def test_the_mark_comes_from_the_environment(tmp_path):
    code = (
        "import django; django.setup(); from django.db import connection; "
        "print(connection.cursor().execute('PRAGMA wal_autocheckpoint').fetchone()[0])"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "memory.settings",
        "MEMORY_DATA_DIR": str(tmp_path),
        "SQLITE_WAL_PAGES": "2500",
    }
    env.pop("DATABASE_URL", None)  # the embedded default
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "2500"
