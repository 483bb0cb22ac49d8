"""remember → model → tools → tables, and recall at levels 1 and 2, with the fake CLI.

The fake's decisions are scripted (no model runs here); everything else is real: the backend,
the command line, the MCP server process, the tools, the database.
"""

from __future__ import annotations

import json

import pytest

from memory.models import Note, Run, ShapeEntry, Thread, ToolCall

pytestmark = [pytest.mark.usefixtures("grown"), pytest.mark.slow]

TEAM = "У меня в команде работает Юля — продакт-менеджер, Дима — менеджер"
TEAM_ITEMS = [
    {"value": "Юля", "fields": {"роль": "продакт-менеджер"}},
    {"value": "Дима", "fields": {"роль": "менеджер"}},
]
PARSE = {
    "match": "Фраза: «",
    "system_match": "разбор фразы",
    "result": json.dumps(
        {
            "entities": [{"name": "Юля", "type": "person"}, {"name": "Дима", "type": "person"}],
            "relations": [{"source": "Юля", "relation": "работает в", "target": "команда"}],
        },
        ensure_ascii=False,
    ),
}
WRITE_TEAM = {
    "match": "Запомни.*команде работает Юля",
    "tools": [
        {
            "name": "promote_to_list",
            "arguments": {"kind": "команда", "items": TEAM_ITEMS, "basis": TEAM},
        }
    ],
    "result": "Записал: команда — Юля, Дима.",
}
LEVEL2 = {
    "match": "Вопрос: «Кто отвечает за продукт",
    "tools": [{"name": "read_table", "arguments": {"table": "команда"}}],
    "result": json.dumps(
        {
            "found": True,
            "kind": "probabilistic",
            "text": "За продукт, вероятно, отвечает Юля: она продакт-менеджер.",
        },
        ensure_ascii=False,
    ),
}


def test_the_team_goes_through_the_model_into_a_table_and_comes_back_at_level_1(
    fake_claude, alice_api
):
    fake_claude.script([PARSE, WRITE_TEAM])
    stored = alice_api.remember(TEAM)
    assert stored["model"] == {
        "called": True,
        "backend": "claude",
        "status": "done",
        "turns": 3,
        "tools": ["promote_to_list"],
    }
    assert stored["tables_created"] == ["mem_komanda"]
    assert stored["new_tables_filled"] == ["mem_komanda"]
    assert [(t["table"], t["action"], t["rows"]) for t in stored["tables"]] == [
        ("notes", "insert", 1),
        ("mem_komanda", "create", 0),
        ("mem_komanda", "add_columns", 0),
        ("mem_komanda", "insert", 2),
    ]
    assert stored["thread"]
    note = Note.objects.get(pk=stored["stored"]["note"])
    assert note.entities["by"] == "model"
    run = Run.objects.get(pk=stored["run"])
    assert run.model_turns == 3 and run.tokens_in > 0 and run.cost_usd > 0
    assert run.tools == ["promote_to_list"]
    assert run.skills == ["use-tables", "naming", "use-objects"]
    # The tool turn got the skills in its system prompt and only the tools it may use.
    turn = fake_claude.transcript(stored["thread"])[-1]
    assert "## Навык use-tables" in turn["system"]
    assert "mcp__memory__promote_to_list" in turn["allowed_tools"]
    assert "mcp__memory__ask_graph" not in turn["allowed_tools"]

    answer = alice_api.recall("Кто у меня в команде продакт-менеджер?")
    assert answer["depth_used"] == 1
    assert answer["kind"] == "affirmative"
    assert [r["value"] for r in answer["answer"]["data"]["tables"][0]["rows"]] == ["Юля"]
    assert "thread" not in answer  # no model was needed


def test_level_2_answers_when_level_1_misses(fake_claude, alice_api):
    fake_claude.script([PARSE, WRITE_TEAM, LEVEL2])
    alice_api.remember(TEAM)
    answer = alice_api.recall("Кто отвечает за продукт?", trace=True)
    assert answer["depth_used"] == 2
    assert answer["kind"] == "probabilistic"
    assert answer["answer"]["text"].startswith("За продукт, вероятно, отвечает Юля")
    assert [(e["level"], e["status"]) for e in answer["report"]] == [
        (1, "empty"),
        (1, "empty"),
        (2, "answered"),
    ]
    assert answer["thread"]
    run = Run.objects.get(pk=answer["run"])
    assert run.model_turns == 2  # the answer and one read tool call
    assert run.tools == ["read_table"]
    assert list(ToolCall.objects.filter(run=run).values_list("tool", flat=True)) == ["read_table"]
    level2 = fake_claude.transcript(answer["thread"])[0]
    assert "mcp__memory__read_table" in level2["allowed_tools"]
    assert not any("promote_to_list" in t for t in level2["allowed_tools"])  # read tools only
    assert "komanda" in level2["prompt"]  # the catalog was given


def test_remember_with_a_thread_continues_the_conversation(fake_claude, alice_api):
    fake_claude.script(
        [
            PARSE,
            {"match": "Запомни.*Миша", "result": "продолжаю после: <<previous_prompt>>"},
            {"match": "Запомни.*Дима", "result": "первый ход"},
        ]
    )
    first = alice_api.remember("У меня есть друг Дима")
    second = alice_api.remember("И ещё друг Миша", thread=first["thread"])
    assert second["thread"] == first["thread"]
    assert second["params"]["thread"] == {"fate": "accepted"}
    turns = fake_claude.transcript(first["thread"])
    assert len(turns) == 2
    assert "Дима" in turns[0]["prompt"]
    assert turns[1]["result"].startswith("продолжаю после: ") and "Дима" in turns[1]["result"]
    assert Thread.objects.get(pk=first["thread"]).turns == 2


def test_a_foreign_thread_is_thread_not_found_before_anything_is_written(
    fake_claude, alice_api, bob_api
):
    fake_claude.script([PARSE, {"match": "Запомни", "result": "ok"}])
    alices = alice_api.remember("У меня есть друг Дима")["thread"]
    notes_before = Note.objects.count()
    body = bob_api.call("remember", expect=404, text="А у меня друг Петя", thread=alices)
    assert body["error"]["code"] == "thread_not_found"
    assert body["error"]["retryable"] is False
    assert Note.objects.count() == notes_before


def test_a_thread_the_cli_lost_is_thread_not_found_and_the_note_stays(fake_claude, alice_api):
    fake_claude.script([PARSE, {"match": "Запомни", "result": "ok"}])
    thread = alice_api.remember("У меня есть друг Дима")["thread"]
    for path in fake_claude.home.glob(f"projects/*/{thread}.jsonl"):
        path.unlink()  # the transcript is gone, as when the working folder changes
    body = alice_api.call("remember", expect=404, text="И ещё друг Миша", thread=thread)
    assert body["error"]["code"] == "thread_not_found"
    assert "No conversation found with session ID" in body["error"]["message"]
    assert Note.objects.filter(pk=body["error"]["stored"]["note"], text="И ещё друг Миша").exists()


def test_bad_model_output_is_reported_apart_from_thread_errors(fake_claude, alice_api):
    fake_claude.script(
        [{"match": "Фраза", "result": "не json"}, {"match": "Повтори", "result": "опять не json"}]
    )
    answer = alice_api.remember("У меня есть друг Дима")
    assert answer["model"]["status"] == "failed"
    assert answer["model"]["error"]["code"] == "model_bad_output"
    assert "thread" not in answer
    assert Note.objects.filter(text="У меня есть друг Дима").exists()  # nothing lost
    assert Run.objects.get(pk=answer["run"]).error.startswith("model_bad_output")


def test_create_table_is_made_by_the_naming_function_before_the_model_writes(
    fake_claude, alice_api
):
    fake_claude.script(
        [
            PARSE,
            {
                "match": "Зовущий требует таблицу «Проекты»",
                "tools": [
                    {
                        "name": "promote_to_list",
                        "arguments": {"kind": "проекты", "items": [{"value": "Маяк"}]},
                    }
                ],
                "result": "ok",
            },
        ]
    )
    answer = alice_api.remember("Я веду проект Маяк", create_table="Проекты")
    assert answer["params"]["create_table"]["fate"] == "accepted"
    assert answer["tables_created"] == ["mem_proyekty"]
    assert ("mem_proyekty", "append", 1) in [
        (t["table"], t["action"], t["rows"]) for t in answer["tables"]
    ]
    refused = alice_api.remember("x", create_table="x; DROP TABLE users")
    assert refused["params"]["create_table"]["fate"] == "bad_form"
    assert ShapeEntry.objects.filter(kind="table").count() == 1


def test_with_no_model_remember_keeps_the_note_and_recall_never_reaches_level_2(
    alice_api, settings
):
    assert settings.MODEL_BACKEND == "none"
    stored = alice_api.remember(TEAM, lang="en")
    assert stored["model"]["called"] is False
    assert "MODEL_BACKEND=none" in stored["model"]["note"]
    assert "thread" not in stored
    answer = alice_api.recall("Кто отвечает за продукт?", lang="en")
    assert answer["depth_used"] == 3  # level 1 and the graph ran; level 2 could not
    (level2,) = [e for e in answer["report"] if e["level"] == 2]
    assert (level2["status"], level2["returned"]) == ("skipped", 0)
    assert "MODEL_BACKEND=none" in level2["note"]
    assert Run.objects.get(pk=answer["run"]).model_turns == 0
    assert "thread" not in answer


def test_a_model_call_that_failed_is_counted_on_its_run(fake_claude, alice_api):
    """Facts evolution reads must be true: a level-2 call answered out of form twice spent two
    turns and their tokens, and the run says so (it said 0 and 0 before)."""
    fake_claude.script(
        [
            PARSE,
            WRITE_TEAM,
            {"match": "Вопрос: «Кто отвечает за продукт", "result": "не json"},
            {"match": "Повтори", "result": "опять не json"},
        ]
    )
    alice_api.remember(TEAM)
    answer = alice_api.recall("Кто отвечает за продукт?")
    (level2,) = [e for e in answer["report"] if e["level"] == 2]
    assert level2["status"] == "failed" and "model_bad_output" in level2["note"]
    run = Run.objects.get(pk=answer["run"])
    assert run.model_turns == 2  # the first answer and its repair
    assert run.tokens_in > 0 and run.tokens_out > 0
    assert run.skills == ["use-knowledge-graph", "use-tables"]  # level 2 ran, though it failed


def test_a_remember_whose_parse_failed_counts_both_calls(fake_claude, alice_api):
    fake_claude.script(
        [{"match": "Фраза", "result": "не json"}, {"match": "Повтори", "result": "опять не json"}]
    )
    answer = alice_api.remember("У меня есть друг Дима")
    assert answer["model"]["status"] == "failed"
    run = Run.objects.get(pk=answer["run"])
    assert (run.model_turns, run.tokens_in > 0) == (2, True)


def test_a_crashing_model_is_one_call_counted(fake_claude, alice_api):
    fake_claude.script([PARSE, WRITE_TEAM, {"match": "Вопрос", "exit": 1, "stderr": "boom"}])
    alice_api.remember(TEAM)
    answer = alice_api.recall("Кто отвечает за продукт?")
    run = Run.objects.get(pk=answer["run"])
    assert (run.model_turns, run.tokens_in) == (1, 0)  # a call was made; no usage was reported
