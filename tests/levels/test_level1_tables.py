"""Level 1 reads the grown shape: labels and values meet the question's lemmas."""

from __future__ import annotations

import pytest

from memory.models import Architect
from memory.shape.tools import make_new_kind, promote_to_list

pytestmark = pytest.mark.usefixtures("grown")


def _architect(api) -> Architect:
    from memory.models import ApiKey

    return ApiKey.find(api.key).architect


def test_who_are_my_friends_returns_the_list_with_claims_and_basis(alice_api):
    alice = _architect(alice_api)
    promote_to_list(
        architect=alice,
        kind="друзья",
        items=["Дима", "Миша"],
        basis="у меня есть друзья Дима и Миша",
    )
    answer = alice_api.recall("Кто мои друзья?")
    assert answer["kind"] == "affirmative"
    assert answer["depth_used"] == 1
    assert answer["answer"]["form"] == "data"
    (table,) = answer["answer"]["data"]["tables"]
    assert table["table"] == "друзья"
    assert table["name"] == "mem_druzya"
    assert [(r["value"], r["claim"], r["basis"]["text"]) for r in table["rows"]] == [
        ("Дима", "stated", "у меня есть друзья Дима и Миша"),
        ("Миша", "stated", "у меня есть друзья Дима и Миша"),
    ]
    assert "друзья: Дима [stated]; Миша [stated]" in answer["answer"]["text"]
    consulted = {e["source"]: (e["status"], e["returned"]) for e in answer["report"]}
    assert consulted == {"mem_druzya": ("answered", 2), "notes": ("empty", 0)}


def test_a_value_narrows_the_table_to_its_row(alice_api):
    alice = _architect(alice_api)
    promote_to_list(
        architect=alice,
        kind="команда",
        items=[
            {"value": "Юля", "fields": {"роль": "продакт-менеджер"}},
            {"value": "Дима", "fields": {"роль": "менеджер"}},
        ],
    )
    answer = alice_api.recall("Кто у меня в команде продакт-менеджер?")
    assert answer["kind"] == "affirmative"
    rows = answer["answer"]["data"]["tables"][0]["rows"]
    assert [r["value"] for r in rows] == ["Юля"]
    assert rows[0]["fields"]["роль"]["value"] == "продакт-менеджер"

    whole = alice_api.recall("Кто в команде?")
    assert [r["value"] for r in whole["answer"]["data"]["tables"][0]["rows"]] == ["Юля", "Дима"]


def test_a_root_kind_answers_by_its_label(alice_api):
    alice = _architect(alice_api)
    make_new_kind(architect=alice, kind="любимый цвет", value="синий")
    answer = alice_api.recall("Какой у меня любимый цвет?")
    assert answer["kind"] == "affirmative"
    assert answer["answer"]["data"]["tables"][0]["values"]["любимый цвет"]["value"] == "синий"


def test_another_architect_gets_nothing_from_the_grown_tables(alice_api, bob_api):
    promote_to_list(architect=_architect(alice_api), kind="друзья", items=["Дима"])
    answer = bob_api.recall("Кто мои друзья?")
    assert answer["answer"]["found"] is False
    assert all(e["source"] != "mem_druzya" for e in answer["report"])


def test_notes_ride_along_when_tables_answer(alice_api):
    alice = _architect(alice_api)
    alice_api.remember("Мой друг Дима любит шахматы")
    promote_to_list(architect=alice, kind="друзья", items=["Дима"])
    answer = alice_api.recall("Кто мои друзья?")
    data = answer["answer"]["data"]
    assert [t["table"] for t in data["tables"]] == ["друзья"]
    assert data["notes"][0]["text"] == "Мой друг Дима любит шахматы"


def test_a_long_list_is_cut_and_says_so(alice_api):
    from memory.levels.relational.grown import MAX_ROWS

    promote_to_list(
        architect=_architect(alice_api),
        kind="друзья",
        items=[f"друг {i}" for i in range(MAX_ROWS + 5)],
    )
    answer = alice_api.recall("Кто мои друзья?", lang="en")
    table = answer["answer"]["data"]["tables"][0]
    assert len(table["rows"]) == MAX_ROWS
    assert table["more"] is True
    assert f"the first {MAX_ROWS} rows shown, there are more" in answer["answer"]["text"]
