"""The three write tools, driven directly (the model calls them through MCP later)."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from memory.models import Architect, ShapeEntry
from memory.shape import names, physical, selectors
from memory.shape.physical import ROOT_TABLE
from memory.shape.tools import ShapeError, make_new_kind, promote_to_list, write_value

pytestmark = pytest.mark.usefixtures("grown")


@pytest.fixture
def alice_():
    return Architect.objects.create(name="alice")


@pytest.fixture
def bob_():
    return Architect.objects.create(name="bob")


def _root(architect, *kinds):
    model = physical.root_model(kinds)
    return model.objects.get(architect_id=architect.pk)


def test_make_new_kind_adds_three_columns_and_writes_the_value(alice_):
    report = make_new_kind(
        architect=alice_, kind="Любимый цвет", value="синий", basis="сказал архитектор"
    )
    assert [c.action for c in report.tables] == ["add_columns", "update"]
    columns = physical.columns_of(ROOT_TABLE)
    assert {"lyubimy_tsvet", "lyubimy_tsvet__kind", "lyubimy_tsvet__basis"} <= columns
    row = _root(alice_, "lyubimy_tsvet")
    assert row.v_lyubimy_tsvet == "синий"
    assert row.k_lyubimy_tsvet == "stated"
    assert json.loads(row.b_lyubimy_tsvet)["text"] == "сказал архитектор"
    entry = ShapeEntry.objects.get(architect=alice_, kind="column")
    assert entry.labels == ["Любимый цвет"]
    assert entry.scheme == "wikipedia"


def test_write_value_updates_in_place_without_growing(alice_):
    make_new_kind(architect=alice_, kind="город", value="Москва")
    before = physical.columns_of(ROOT_TABLE)
    report = write_value(architect=alice_, kind="Город", value="Казань", claim="inferred")
    assert [(c.action, c.rows) for c in report.tables] == [("update", 1)]
    assert physical.columns_of(ROOT_TABLE) == before
    row = _root(alice_, "gorod")
    assert (row.v_gorod, row.k_gorod) == ("Казань", "inferred")


def test_write_value_to_a_missing_kind_is_a_clear_error(alice_):
    with pytest.raises(ShapeError) as error:
        write_value(architect=alice_, kind="рост", value="180")
    assert error.value.code == "kind_not_found"
    assert "make_new_kind creates one" in error.value.message


def test_a_bad_claim_is_refused(alice_):
    with pytest.raises(ShapeError, match="kind of claim"):
        make_new_kind(architect=alice_, kind="рост", value="180", claim="rumour")


def test_promote_to_list_moves_the_former_value_with_its_time_and_clears_the_root(alice_):
    make_new_kind(architect=alice_, kind="друг", value="Дима", basis="первое слово")
    first_at = json.loads(_root(alice_, "drug").b_drug)["at"]
    report = promote_to_list(architect=alice_, kind="друзья", items=["Миша"], basis="второе слово")
    assert report.tables_created == ["mem_druzya"]
    assert report.new_tables_filled == ["mem_druzya"]
    assert [c.action for c in report.tables] == ["create", "clear", "move", "insert"]
    # The root field is cleared, the column stays (nothing is ever dropped).
    row = _root(alice_, "drug")
    assert (row.v_drug, row.k_drug, row.b_drug) == (None, None, None)
    assert "drug" in physical.columns_of(ROOT_TABLE)
    table = ShapeEntry.objects.get(architect=alice_, kind="table")
    rows = selectors.table_rows(alice_, table)
    assert [r["value"] for r in rows] == ["Дима", "Миша"]
    assert rows[0]["at"].startswith(first_at[:19])
    assert rows[0]["basis"]["text"] == "первое слово"
    column = ShapeEntry.objects.get(architect=alice_, kind="column", name="drug")
    assert column.promoted_to == table


def test_promote_to_list_appends_when_the_list_exists(alice_):
    promote_to_list(architect=alice_, kind="друзья", items=["Дима"])
    report = promote_to_list(architect=alice_, kind="Друзья", items=["Миша", "Коля"])
    assert report.tables_created == []
    assert [(c.action, c.rows) for c in report.tables] == [("append", 2)]
    table = ShapeEntry.objects.get(architect=alice_, kind="table")
    assert [r["value"] for r in selectors.table_rows(alice_, table)] == ["Дима", "Миша", "Коля"]


def test_a_promoted_kind_refuses_single_writes(alice_):
    make_new_kind(architect=alice_, kind="друг", value="Дима")
    promote_to_list(architect=alice_, kind="друзья", items=["Миша"])
    with pytest.raises(ShapeError) as error:
        write_value(architect=alice_, kind="друг", value="Коля")
    assert error.value.code == "kind_is_list"


def test_the_owners_friends_example_is_a_list_with_two_rows(alice_):
    # «у меня есть друзья Дима и Миша»: one kind of thing, two values, no attributes:
    # a list with its one value column and two rows.
    report = promote_to_list(
        architect=alice_,
        kind="друзья",
        items=["Дима", "Миша"],
        basis="у меня есть друзья Дима и Миша",
    )
    assert report.as_dict() == {
        "tables": [
            {"table": "mem_druzya", "label": "друзья", "action": "create", "rows": 0},
            {"table": "mem_druzya", "label": "друзья", "action": "insert", "rows": 2},
        ],
        "tables_created": ["mem_druzya"],
        "new_tables_filled": ["mem_druzya"],
    }


def test_the_owners_team_example_is_a_table_with_a_role_column(alice_):
    report = promote_to_list(
        architect=alice_,
        kind="команда",
        items=[
            {"value": "Юля", "fields": {"роль": "продакт-менеджер"}},
            {"value": "Дима", "fields": {"роль": "менеджер"}},
        ],
        basis="у меня в команде работает Юля — продакт-менеджер, Дима — менеджер",
    )
    assert report.tables_created == ["mem_komanda"]
    assert [c.action for c in report.tables] == ["create", "add_columns", "insert"]
    assert {
        "value",
        "rol",
        "rol__kind",
        "rol__basis",
        "root_id",
        "architect_id",
    } <= physical.columns_of("mem_komanda")
    table = ShapeEntry.objects.get(architect=alice_, kind="table")
    rows = selectors.table_rows(alice_, table)
    assert [(r["value"], r["fields"]["роль"]["value"]) for r in rows] == [
        ("Юля", "продакт-менеджер"),
        ("Дима", "менеджер"),
    ]


def test_a_hostile_label_creates_nothing(alice_):
    tables_before = set(connection.introspection.table_names())
    for tool, kwargs in [
        (make_new_kind, {"kind": "x; DROP TABLE users", "value": "1"}),
        (promote_to_list, {"kind": "team'); --", "items": ["a"]}),
        (
            promote_to_list,
            {"kind": "команда", "items": [{"value": "Юля", "fields": {"роль; drop": "x"}}]},
        ),
    ]:
        with pytest.raises(names.NameRefused):
            tool(architect=alice_, **kwargs)
    assert ShapeEntry.objects.count() == 0
    assert set(connection.introspection.table_names()) - tables_before <= {ROOT_TABLE}
    if ROOT_TABLE in connection.introspection.table_names():
        assert physical.columns_of(ROOT_TABLE) == {"id", "architect_id"}


def test_architect_b_never_sees_as_rows_columns_or_catalog(alice_, bob_):
    make_new_kind(architect=alice_, kind="любимый цвет", value="синий")
    promote_to_list(architect=alice_, kind="друзья", items=["Дима"])
    # Bob's catalog is empty, so no function can reach Alice's shape for him.
    assert selectors.catalog(bob_) == []
    assert selectors.catalog_summary(bob_) == [{"table": "root", "name": ROOT_TABLE, "kinds": []}]
    with pytest.raises(ShapeError):
        write_value(architect=bob_, kind="любимый цвет", value="красный")
    with pytest.raises(ShapeError):
        write_value(architect=bob_, kind="роль", value="x", table="друзья", row=1)
    alice_table = ShapeEntry.objects.get(architect=alice_, kind="table")
    assert selectors.table_rows(bob_, alice_table) == []
    assert (
        selectors.root_values(
            bob_, list(ShapeEntry.objects.filter(architect=alice_, kind="column"))
        )
        == {}
    )
    # Bob growing the same names gets his own catalog entries and rows; Alice's stay hers.
    make_new_kind(architect=bob_, kind="любимый цвет", value="красный")
    promote_to_list(architect=bob_, kind="друзья", items=["Петя"])
    bob_table = ShapeEntry.objects.get(architect=bob_, kind="table")
    assert [r["value"] for r in selectors.table_rows(bob_, bob_table)] == ["Петя"]
    assert [r["value"] for r in selectors.table_rows(alice_, alice_table)] == ["Дима"]
    assert _root(alice_, "lyubimy_tsvet").v_lyubimy_tsvet == "синий"
    # Bob cannot write into Alice's list row through his own table of the same name.
    alice_row = selectors.table_rows(alice_, alice_table)[0]["row"]
    promote_to_list(
        architect=bob_, kind="друзья", items=[{"value": "Ваня", "fields": {"город": "Тула"}}]
    )
    with pytest.raises(ShapeError) as error:
        make_new_kind(architect=bob_, kind="город", value="Омск", table="друзья", row=alice_row)
    assert error.value.code in ("row_not_found", "shape_error")
    assert selectors.table_rows(alice_, alice_table)[0]["fields"] == {}


def test_attribute_of_a_list_row_through_make_new_kind_and_write_value(alice_):
    promote_to_list(architect=alice_, kind="команда", items=["Юля"])
    table = ShapeEntry.objects.get(architect=alice_, kind="table")
    row = selectors.table_rows(alice_, table)[0]["row"]
    make_new_kind(architect=alice_, kind="роль", value="продакт", table="команда", row=row)
    write_value(architect=alice_, kind="роль", value="продакт-менеджер", table="команда", row=row)
    assert selectors.table_rows(alice_, table)[0]["fields"]["роль"]["value"] == "продакт-менеджер"
