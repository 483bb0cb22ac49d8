"""The claude CLI backend against the fake CLI that behaves as the passport measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory import model
from memory.model.base import (
    ModelBadOutput,
    ModelError,
    ModelNotInstalled,
    ModelTimeout,
    ThreadNotFound,
)
from memory.model.claude_cli import ClaudeCli, parse_envelope


def _run(backend, prompt, thread=None, timeout=60.0):
    return backend.run(
        prompt=prompt, system="Ты — память.", tools=None, thread=thread, timeout=timeout
    )


def test_it_calls_the_cli_with_the_measured_command_line(fake_claude, settings):
    fake_claude.script([{"match": "скажи", "result": "альфа"}])
    result = _run(model.backend(), "скажи слово")
    (call,) = fake_claude.calls()
    argv = call["argv"]
    assert argv[:8] == [
        "-p",
        argv[1],
        "--system-prompt",
        "Ты — память.",
        "--model",
        "sonnet",
        "--output-format",
        "json",
    ]
    assert argv[1].startswith("скажи слово")
    assert argv[8] == "--mcp-config" and argv[10] == "--strict-mcp-config"
    # The internet ban is said by name, not left to the CLI's defaults (PASSPORT.md, fork 10).
    assert argv[11:13] == ["--disallowedTools", "WebFetch,WebSearch,Bash"]
    assert "--resume" not in argv
    assert call["cwd"] == str(Path(settings.CLAUDE_WORKDIR))
    assert result.text == "альфа"
    assert result.turns == 1


def test_the_web_is_refused_by_name_not_by_default(fake_claude):
    # The CLI's own web tools (and the shell) are denied on the command line: a model that
    # tries them gets a refusal, whatever the CLI's defaults (PASSPORT.md, fork 10).
    calls = [
        {"name": "WebFetch", "arguments": {"url": "https://example.com"}},
        {"name": "WebSearch", "arguments": {"query": "Ельцин"}},
        {"name": "Bash", "arguments": {"command": "curl https://example.com"}},
    ]
    fake_claude.script([{"match": "найди", "tools": calls, "result": "<<tool_results>>"}])
    result = _run(model.backend(), "найди в интернете")
    assert json.loads(result.text) == [
        {"name": name, "error": "tool not available: disallowed"}
        for name in ("WebFetch", "WebSearch", "Bash")
    ]


def test_a_resumed_thread_keeps_its_id_remembers_and_reads_from_cache(fake_claude):
    fake_claude.script(
        [
            {"match": "скажи", "result": "альфа"},
            {"match": "только что", "result": "ты сказал: <<previous_result>>"},
        ]
    )
    backend = model.backend()
    first = _run(backend, "скажи слово")
    second = _run(backend, "какое слово ты только что сказал?", thread=first.thread)
    assert second.thread == first.thread  # one id per thread, not per message
    assert second.text == "ты сказал: альфа"  # the thread remembers
    assert first.cache_creation_tokens > 0 and first.cache_read_tokens == 0
    assert second.cache_read_tokens > 0  # resuming reads the history from cache
    assert "--resume" in fake_claude.calls()[1]["argv"]
    assert second.cost_usd is not None and second.cost_usd > 0


def test_an_unknown_thread_is_thread_not_found_not_bad_output(fake_claude):
    with pytest.raises(ThreadNotFound) as error:
        _run(model.backend(), "продолжи", thread="00000000-0000-0000-0000-000000000000")
    assert error.value.code == "thread_not_found"
    assert error.value.status == 404
    assert "No conversation found with session ID" in error.value.message
    assert not isinstance(error.value, ModelBadOutput)


def test_threads_are_bound_to_the_working_folder(fake_claude, tmp_path):
    fake_claude.script([{"match": ".", "result": "ok"}])
    first = _run(model.backend(), "скажи слово")
    elsewhere = ClaudeCli(binary="claude", model="sonnet", workdir=tmp_path / "another-folder")
    with pytest.raises(ThreadNotFound):
        _run(elsewhere, "продолжи", thread=first.thread)


def test_a_hanging_cli_is_a_timeout(fake_claude):
    fake_claude.script([{"match": ".", "sleep": 5, "result": "late"}])
    with pytest.raises(ModelTimeout) as error:
        _run(model.backend(), "думай долго", timeout=1.5)
    assert error.value.retryable


def test_a_missing_cli_is_not_installed(fake_claude, tmp_path):
    backend = ClaudeCli(binary="claude-that-is-not-there", model="sonnet", workdir=tmp_path)
    with pytest.raises(ModelNotInstalled):
        _run(backend, "x")


def test_a_crashing_cli_is_a_named_failure(fake_claude):
    fake_claude.script([{"match": ".", "exit": 2, "stderr": "segfault in the model"}])
    with pytest.raises(ModelError) as error:
        _run(model.backend(), "x")
    assert type(error.value) is ModelError
    assert "exit 2" in error.value.message and "segfault" in error.value.message


@pytest.mark.parametrize(
    "stdout, problem",
    [("not json", "no JSON envelope"), ('{"result": "x"}', "no session_id")],
)
def test_a_broken_envelope_is_bad_output(stdout, problem):
    with pytest.raises(ModelBadOutput, match=problem):
        parse_envelope(0, stdout, "", None, 0.1)


def test_an_error_envelope_is_a_model_error():
    with pytest.raises(ModelError, match="overloaded"):
        parse_envelope(
            0, '{"session_id": "s", "is_error": true, "result": "overloaded"}', "", None, 0.1
        )
