"""JSON from a model: schema-checked, one repair in the same thread, then a named failure."""

from __future__ import annotations

import json

import pytest

from memory import model
from memory.model.base import ModelBadOutput
from memory.model.parse import phrase_parse

PHRASE = {
    "entities": [{"name": "Дима", "type": "person"}],
    "relations": [{"source": "архитектор", "relation": "друг", "target": "Дима"}],
}


def test_the_phrase_parse_returns_clean_json_and_gets_no_tools(fake_claude):
    fake_claude.script([{"match": "Фраза", "result": json.dumps(PHRASE, ensure_ascii=False)}])
    phrase, result = phrase_parse(model.backend(), "У меня есть друг Дима", architect_id=1)
    assert phrase.entities == PHRASE["entities"]
    assert phrase.relations == PHRASE["relations"]
    (turn,) = fake_claude.transcript(result.thread)
    assert turn["mcp_servers"] == []  # no tools: an empty server list under --strict-mcp-config
    assert turn["allowed_tools"] == []


def test_a_reply_out_of_form_is_repaired_once_in_the_same_thread(fake_claude):
    fake_claude.script(
        [
            {"match": "Фраза", "result": "Конечно! Вот разбор: Дима — друг."},
            {
                "match": "Повтори ответ",
                "result": "```json\n" + json.dumps(PHRASE, ensure_ascii=False) + "\n```",
            },
        ]
    )
    phrase, result = phrase_parse(model.backend(), "У меня есть друг Дима", architect_id=1)
    assert phrase.entities == PHRASE["entities"]
    turns = fake_claude.transcript(result.thread)
    assert len(turns) == 2
    assert turns[1]["prompt"].startswith("Твой ответ not JSON")
    assert result.turns == 2  # both calls counted


def test_a_second_failure_is_named_bad_output(fake_claude):
    fake_claude.script(
        [
            {"match": "Фраза", "result": '{"entities": "Дима", "relations": []}'},
            {"match": "Повтори ответ", "result": "{}"},
        ]
    )
    with pytest.raises(ModelBadOutput) as error:
        phrase_parse(model.backend(), "У меня есть друг Дима", architect_id=1)
    assert error.value.code == "model_bad_output"
    assert "does not match the schema at entities" in error.value.message
    assert "after repair does not match the schema at (root)" in error.value.message
