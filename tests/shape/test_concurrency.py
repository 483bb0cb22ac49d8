"""Concurrent growth: one set of columns, one table, and every value kept.

Each thread has its own database connection (Django's connections are per thread), so on
PostgreSQL these are separate sessions contending for the advisory lock, and on SQLite
separate connections contending for the write lock taken by BEGIN IMMEDIATE.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from memory.models import Architect, ShapeEntry
from memory.shape import physical, selectors
from memory.shape.physical import ROOT_TABLE
from memory.shape.tools import make_new_kind, promote_to_list

pytestmark = pytest.mark.usefixtures("grown")

N = 20


def run_together(calls: list[Callable[[], Any]]) -> list[Any]:
    """Start every call at once (a barrier), each in its own thread and connection."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def worker(i: int) -> None:
        try:
            barrier.wait()
            results[i] = calls[i]()
        except BaseException as error:  # noqa: BLE001 - reported to the test below
            results[i] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    errors = [r for r in results if isinstance(r, BaseException)]
    assert not errors, errors
    return results


def test_twenty_architects_growing_the_same_kind_leave_one_set_of_columns():
    architects = [Architect.objects.create(name=f"a{i}") for i in range(N)]
    run_together(
        [
            (lambda a=a, i=i: make_new_kind(architect=a, kind="любимый цвет", value=f"цвет {i}"))
            for i, a in enumerate(architects)
        ]
    )
    assert physical.columns_of(ROOT_TABLE) == {
        "id",
        "architect_id",
        "lyubimy_tsvet",
        "lyubimy_tsvet__kind",
        "lyubimy_tsvet__basis",
    }
    assert ShapeEntry.objects.filter(kind="column").count() == N
    for i, architect in enumerate(architects):
        values = selectors.root_values(
            architect, list(ShapeEntry.objects.filter(architect=architect))
        )
        assert values["любимый цвет"]["value"] == f"цвет {i}"


def test_twenty_calls_for_one_architect_add_the_kind_once():
    alice = Architect.objects.create(name="alice")
    reports = run_together(
        [
            (lambda i=i: make_new_kind(architect=alice, kind="Любимый цвет", value=f"цвет {i}"))
            for i in range(N)
        ]
    )
    first_actions = sorted(r.tables[0].action for r in reports)
    assert first_actions == ["add_columns"] + ["kind_exists"] * (N - 1)
    assert ShapeEntry.objects.filter(architect=alice).count() == 1
    value = selectors.root_values(alice, list(ShapeEntry.objects.filter(architect=alice)))
    assert value["Любимый цвет"]["value"] in {f"цвет {i}" for i in range(N)}


def test_twenty_concurrent_promotions_leave_one_table_and_every_item():
    alice = Architect.objects.create(name="alice")
    reports = run_together(
        [
            (lambda i=i: promote_to_list(architect=alice, kind="друзья", items=[f"друг {i}"]))
            for i in range(N)
        ]
    )
    assert sum(len(r.tables_created) for r in reports) == 1
    tables = ShapeEntry.objects.filter(architect=alice, kind="table")
    assert tables.count() == 1
    rows = selectors.table_rows(alice, tables.get())
    assert sorted(r["value"] for r in rows) == sorted(f"друг {i}" for i in range(N))
