"""The bench scripts run (tiny sizes), so they do not rot between measurements. Those that pin
their own engine (SQLite, or a graph database of their own) are ``engine_free``: CI runs them in
its first leg only, since the second leg's PostgreSQL and Redis decide nothing they check (the
capture-first ones hand replay tasks to the broker, but drain the outbox in a thread of their
own)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.shared_data import LOCOMO, require

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.engine_free
def test_level1_bench_runs_and_prints_ratios():
    require(LOCOMO)  # its notes are LoCoMo's turns, asked LoCoMo's questions
    result = subprocess.run(
        [
            sys.executable,
            "bench/level1.py",
            "--engine",
            "sqlite",
            "--sizes",
            "200",
            "--repeats",
            "3",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.strip().startswith("200")]
    # the grown tables, then the notes' full-text index asked a question and a whole turn
    assert len(lines) == 3
    # p50/p95 of the baseline, the bare statement, level 1 (and, over the tables, recall)
    assert lines[0].count("/") == 4 and all(line.count("/") == 3 for line in lines[1:])
    # The queries one search made: its one statement (and the rows of the table that answers).
    assert [int(line.split()[2]) for line in lines] == [2, 1, 1]
    assert "a LoCoMo question" in result.stdout and "a whole chat turn" in result.stdout


def _run(*args: str) -> str:
    result = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


@pytest.mark.slow
@pytest.mark.engine_free
def test_capture_bench_runs_and_prints_remember_and_lag():
    require(LOCOMO)  # it tells LoCoMo's turns
    out = _run(
        "bench/capture.py", "--facts", "30", "--checkpoints", "15,30", "--lag-seconds", "3",
        "--skip-inline",
    )  # fmt: skip
    rows = [line.split() for line in out.splitlines() if line.strip().startswith(("15 ", "30 "))]
    assert [r[0] for r in rows] == ["15", "30"] and all(float(r[1]) > 0 for r in rows)
    assert "findable by the vectors after p50" in out
    assert "by the graph after p50" in out  # 15 notes: the graph catches up within its wait
    # The fill's rate and its embeddings a note: the notes' own and context vectors at least.
    assert "notes/s from the first remember" in out
    computed = float(out.split("passage embeddings per note: ")[1].split()[0])
    assert computed >= 2.0


@pytest.mark.slow
@pytest.mark.engine_free
@pytest.mark.parametrize("prefill", ["writes", "bulk"])
def test_scale_bench_runs_and_prints_a_table_and_the_growth(prefill):
    require(LOCOMO)  # it tells LoCoMo's turns (bench/capture.py)
    # One write each: a configuration told whole, one prefilled, and two architects. In bulk,
    # only the prefilled ones differ from that (a configuration told whole prefills nothing):
    # two of them, so the growth between two sizes is fitted too.
    sizes, architects, expected = {
        "writes": ("20,40", "2x10", [("20", "1", "0"), ("40", "1", "15"), ("20", "2", "0")]),
        "bulk": ("30,40", "none", [("30", "1", "5"), ("40", "1", "15")]),
    }[prefill]
    out = _run(
        "bench/scale.py", "--sizes", sizes, "--architects-run", architects, "--told", "25",
        "--prefill", prefill,
    )  # fmt: skip
    assert ("in bulk + reindex" in out) == (prefill == "bulk")
    rows = [line.split() for line in out.splitlines() if line.strip()[:2] in ("20", "30", "40")]
    assert [(r[0], r[1], r[2]) for r in rows] == expected
    assert all(float(r[8]) > 0 for r in rows)  # disk per 1k facts was measured
    assert "remember p95 k=" in out and "standard@1" in out


@pytest.mark.slow
@pytest.mark.engine_free
def test_graph_bench_runs_and_its_queries_find_chunks():
    require(LOCOMO)  # its notes and questions are LoCoMo's
    out = _run("bench/graph.py", "--checkpoints", "60,120", "--questions", "5")
    rows = [line.split() for line in out.splitlines() if line.strip()[:3] in ("60 ", "120")]
    assert [r[0] for r in rows] == ["60", "120"]
    assert all(float(r[1]) > 0 for r in rows)  # the store's seconds per note were measured
    # A query that found nothing would be cheap and prove nothing: the hashed words make the
    # questions' keywords meet the notes' entities, so the graph is walked.
    assert all(r[-1] != "0%" for r in rows)
    # level 3 with nano-vectordb's own get beside it (the indexed get's baseline), measured
    assert "lib get p50/p95" in out and all(r[9] == "/" for r in rows)
    assert all(float(r[8]) >= 0 and float(r[10]) >= float(r[8]) for r in rows)
    assert "insert per note k=" in out and "query p50 k=" in out
    assert "bytes written per note, 120 / 60 notes:" in out


@pytest.mark.slow
@pytest.mark.engine_free
@pytest.mark.parametrize("database", ["", "wheel"])
def test_graph_bench_counts_another_architects_notes_in_the_answers(database):
    require(LOCOMO)
    extra = ["--database", database] if database else []
    out = _run(
        "bench/graph.py", "--architects", "3", "--notes-each", "20", "--queries", "12", *extra
    )
    line = next(x for x in out.splitlines() if x.startswith("12 queries:"))
    read = int(line.split(" sources read")[0].rsplit(" ", 1)[1])
    assert read > 0  # the answers named sources: isolation was looked at, not assumed
    assert line.endswith("another architect's notes in the answers: 0 (goal 0)")


@pytest.mark.slow
def test_decision_bench_fits_both_models_and_prints_the_held_out_half_and_the_curve(tmp_path):
    # Evidence as bench/decision.py dumps it, made here: answerable questions whose right note
    # comes with higher coverage and similarity than the never-told ones, in both halves.
    import json
    import random

    rng = random.Random(3)
    questions = []
    for n in range(120):
        told = n % 3 != 0
        base = 0.7 if told else 0.3
        words = {
            "coverage": min(1.0, base + rng.uniform(-0.2, 0.2)),
            "missed": max(0.0, 0.5 - base + rng.uniform(-0.1, 0.1)),
            "unseen": rng.uniform(0, 0.3),
            "best_coverage": min(1.0, base + 0.1),
        }
        meaning = {
            **words,
            "similarity": 0.8 + (0.06 if told else 0.0) + rng.uniform(-0.02, 0.02),
            "over_median": rng.uniform(0, 0.1),
            "gap": rng.uniform(0, 0.05),
            "dense_first": 1.0,
            "context_gain": 0.0,
            "pull": (0.02 if told else -0.01) + rng.uniform(-0.02, 0.02),
        }
        if n < 10:  # evidence dumped before ``pull`` was a feature: read as 0
            del meaning["pull"]
        right = {"first": told, "top3": told, "returned": told}
        questions.append(
            {
                "set": "ru" if n % 2 else "en",
                "id": f"q{n}",
                "kind": "paraphrase" if told else "nearmiss",
                "answerable": told,
                "levels": {"1": {"features": words, **right}, "4": {"features": meaning, **right}},
            }
        )
    evidence = tmp_path / "evidence.json"
    evidence.write_text(json.dumps(questions))
    out = _run("bench/decision.py", "--load", str(evidence))
    assert "thresholds: words" in out and "held_out" in out and "the curve over" in out
    models = json.loads(out.split("ANSWER_MODELS =", 1)[1])
    for name in ("words", "meaning"):
        assert 0.0 < models[name]["threshold"] < 1.0
        # The evidence separates them, so more coverage must mean a higher probability.
        assert models[name]["coefficients"]["coverage"] > 0
    assert models["meaning"]["coefficients"]["pull"] > 0  # and so does the pull


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_locomo_rest_bench_tells_and_asks_over_http(live_server, alice, tmp_path):
    """bench/locomo_rest.py against a served memory (live_server: this process's own, filling
    its stores in the request, so no outbox to wait for): the first 30 turns of the first
    conversation told with the photos' captions, the questions whose evidence is among them
    asked at both depths."""
    require(LOCOMO)
    from memory.models import Note
    from tests.conftest import make_key

    figures_path = tmp_path / "figures.json"
    out = _run(
        "bench/locomo_rest.py", live_server.url, "--conversations", "1", "--turns", "30",
        "--captions", "--keys", make_key(alice, "deep"), "--no-outbox-wait",
        "--json", str(figures_path),
    )  # fmt: skip
    import json

    figures = json.loads(figures_path.read_text())
    assert figures["turns"] == 30 and figures["errors"] == 0
    assert Note.objects.filter(architect=alice).count() == 30
    # the captions went in with their turns (turns 5, 12 and 28 share a photo)
    assert Note.objects.filter(architect=alice, text__contains="[shares a photo: ").count() == 3
    for depth in ("standard", "deep"):
        row = figures[depth]
        assert row["questions"] >= 10
        # a measure that finds nothing would prove nothing: on these turns the memory finds
        # the evidence of every question (measured @10 1.000 at both depths, 17 questions)
        assert row["recall_any@10"] >= 0.6, row
        # and it reads the decision: the answers said found, with the evidence returned
        # (measured found 0.412 at standard, evidence when found 1.000)
        assert row["found"] >= 0.25 and row["evidence_when_found"] >= 0.6, row
    assert "goals (issue 30, all ten conversations):" in out
    assert "deep recall_any@10 ≥ 0.90:" in out


@pytest.mark.slow
@pytest.mark.engine_free
def test_mcp_start_bench_starts_the_server_as_the_model_does():
    # On the embedded defaults of its own data folder, whatever database this run was given.
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    result = subprocess.run(
        [sys.executable, "bench/mcp_start.py", "--starts", "1"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [line for line in result.stdout.splitlines() if " / " in line][1:]  # under the head
    assert [row.split("  ")[0] for row in rows] == [
        "bare interpreter",
        "memory_mcp with the system checks (before)",
        "memory_mcp: started, tools listed, catalog read",
    ]
    assert all(float(row.split()[-1]) > 0 for row in rows)  # each child's processor time
