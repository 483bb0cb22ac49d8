"""The memory at the size a year of use produces: one command, one table (PASSPORT.md «Скорость и
масштаб»).

Each configuration runs in a fresh process and data folder: facts told through the HTTP stack
in-process (capture first, a drainer thread standing in for the worker, as in bench/capture.py),
then recalls. Past ``--told`` facts (default 1000) a configuration is prefilled: the facts before
the last ``--told`` go through the notes' own write path (``notes.note_create``: postings, the
conversation's context, supersession — what makes a remember cost more as the memory grows) and
not through the stores, whose delivery (≈6 notes/s on 2 cores) would take hours at 100k; so levels 3
and 4 see the last ``--told`` facts only, and the disk column counts all of them. Per configuration it prints remember p50/p95 (the last 200 before the end), the
fill lag (how long the stores took to catch up after the last answer), recall p50/p95 per level
that answered (questions built from told facts, at standard and at deep), disk per 1k facts
(the data folder, plus the database on PostgreSQL), and the RSS of the process (web, drainer
and the embedded stores are one process here; with `make run` the worker is another). The last
lines fit how each figure grows with the facts (the exponent of facts^k from the smallest to the
largest size).

    .venv/bin/python bench/scale.py                                  # 1k/10k/100k, SQLite
    .venv/bin/python bench/scale.py --sizes 1000,3000 --architects-run 10x100
    .venv/bin/python bench/scale.py --engine postgres --pg postgres://postgres@127.0.0.1:5432

The graph is the embedded LightRAG unless ``--lightrag-server`` starts a real lightrag-server
for the one architect of each configuration (``make lightrag-server``; the server's model and
embeddings are the OpenAI-compatible stub of tests/lightrag_server, which counts the model calls
a remember costs there: 0 is the rule), or LIGHTRAG_URL(S) name servers in the environment.

    .venv/bin/python bench/scale.py --engine postgres --lightrag-server --sizes 1000,10000 \
        --architects-run none
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROOT = Path(__file__).resolve().parent.parent
PREFILL_COMMIT = 500


def _disk(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _prefill(names: list[str], texts: list[str]) -> float:
    """Tell ``texts`` through the notes' write path (no HTTP, no stores), round the architects
    named; seconds spent."""
    from django.db import transaction

    from memory import language
    from memory.knowledge.notes import note_create
    from memory.models import Architect

    architects = [Architect.objects.get(name=name) for name in names]
    started = time.perf_counter()
    for first in range(0, len(texts), PREFILL_COMMIT):
        # One commit per PREFILL_COMMIT notes: the fill is not what is measured, and a commit
        # a note (an fsync each) would make 100k facts take an hour.
        with transaction.atomic():
            for i, text in enumerate(texts[first : first + PREFILL_COMMIT], first):
                note_create(
                    architect=architects[i % len(architects)],
                    text=text,
                    scope=[],
                    sender="bench",
                    run=None,
                    terms=language.terms(text),
                )
        done = min(first + PREFILL_COMMIT, len(texts))
        if done % 10000 == 0:
            print(f"  {done}/{len(texts)} prefilled", file=sys.stderr)
    return time.perf_counter() - started


def _prefill_bulk(names: list[str], texts: list[str]) -> float:
    """``texts`` as notes written in bulk, a millisecond apart (one conversation per
    architect, as ``_prefill`` makes them), then their postings rebuilt by ``notes.reindex``:
    the same postings, conversation context and index statistics the write path gives
    (tests/levels/test_fulltext.py holds reindex to it), in minutes instead of hours at 100k.
    What it skips is supersession's marks on the older copies: the remembers measured after it
    still run supersession over every note. Seconds spent."""
    from datetime import timedelta

    from django.db import connection
    from django.utils import timezone

    from memory.knowledge.notes import reindex
    from memory.models import Architect, Note

    architects = [Architect.objects.get(name=name) for name in names]
    started = time.perf_counter()
    first_at = timezone.now() - timedelta(milliseconds=len(texts) + 1000)
    batch = []
    for i, text in enumerate(texts):
        batch.append(
            Note(
                architect=architects[i % len(architects)],
                text=text,
                scope=[],
                sender="bench",
                created_at=first_at + timedelta(milliseconds=i),
            )
        )
        if len(batch) == PREFILL_COMMIT * 4 or i == len(texts) - 1:
            Note.objects.bulk_create(batch)
            batch = []
    print(f"  {len(texts)} notes written in bulk", file=sys.stderr)
    for architect in architects:
        reindex(architect.pk)
    if connection.vendor == "postgresql":
        # Writes spread over months leave what autovacuum keeps: the planner statistics
        # (remember p95 at 100k: 393.6 ms without, 130.7 ms with) and the visibility map, so an
        # index-only scan of the postings need not visit the table (as bench/level1.py does).
        # Minutes of bulk loading leave neither yet.
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    return time.perf_counter() - started


def _server(architects: int):  # type: ignore[no-untyped-def]
    """A real lightrag-server for the one architect, pointed at by LIGHTRAG_URLS."""
    import tempfile

    sys.path.insert(0, str(ROOT))
    from tests.lightrag_server.harness import LightRagServer, installed

    if architects != 1:
        raise SystemExit("--lightrag-server runs one architect (a server serves one workspace)")
    if not installed():
        raise SystemExit("--lightrag-server needs `make lightrag-server` first")
    server = LightRagServer(Path(tempfile.mkdtemp(prefix="memory-scale-lightrag-")))
    os.environ["LIGHTRAG_URLS"] = json.dumps({"scale-0": server.url})
    os.environ["LIGHTRAG_API_KEY"] = server.api_key
    return server


def run_one(
    facts: int,
    architects: int,
    engine: str,
    pg: str,
    told: int,
    lightrag_server: bool = False,
    prefill: str = "writes",
) -> dict:
    """One configuration, in this (fresh) process. Returns its figures."""
    server = _server(architects) if lightrag_server else None
    try:
        figures = _run(facts, architects, engine, pg, told, prefill)
    finally:
        if server is not None:
            server.close()
    if server is not None:
        figures["graph"] = "lightrag-server"
        figures["server_model_calls"] = server.llm_calls()
    return figures


def _run(facts: int, architects: int, engine: str, pg: str, told: int, prefill: str) -> dict:
    os.environ["STORES_FILL"] = "behind"
    os.environ["RELEARNING"] = "off"  # first asks: what is measured is finding, not learning
    if engine == "sqlite":  # its own file in its own data folder, whatever the caller's is
        os.environ.pop("DATABASE_URL", None)
    else:
        import psycopg

        name = f"memory_bench_scale_{os.getpid()}"
        with psycopg.connect(f"{pg}/postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        os.environ["DATABASE_URL"] = f"{pg}/{name}"
    from capture import Drainer, _client, _remember, _texts
    from common import percentile, setup_django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory.settings")
    setup_django("scale")  # a fresh data folder of its own
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from memory.models import OutboxItem

    call_command("migrate", verbosity=0)
    texts = _texts(facts)
    clients = [_client(f"scale-{i}") for i in range(architects)]  # named as _prefill reads
    before = max(0, facts - told)
    names = [f"scale-{i}" for i in range(architects)]
    fill = _prefill_bulk if prefill == "bulk" else _prefill
    prefill_seconds = fill(names, texts[:before]) if before else 0.0
    drainer = Drainer()
    drainer.start()
    spent: list[float] = []
    started = time.perf_counter()
    for i, text in enumerate(texts[before:], before):
        seconds, _ = _remember(clients[i % architects], text)
        spent.append(seconds)
        if (i + 1) % 1000 == 0:
            print(f"  {i + 1}/{facts} told", file=sys.stderr)
    told = time.perf_counter()
    while OutboxItem.objects.filter(status="queued").exists():
        time.sleep(0.2)
    lag = time.perf_counter() - told
    drainer.stop.set()
    drainer.join()
    fill_seconds = time.perf_counter() - started

    # Questions built from told facts: a told turn's content words (level 1 answers it), and
    # the same at deep (the ladder may climb when the words are not enough).
    from memory import language

    by_level: dict[str, list[float]] = {}
    step = max(1, facts // 100)
    for n, text in enumerate(texts[::step][:100]):
        words = " ".join(language.keywords(text.split(":", 1)[-1])[:6]) or text[:60]
        client = clients[(n * step) % architects]
        for depth in ("standard", "deep"):
            t0 = time.perf_counter()
            response = client.post("/api/v1/recall", {"text": words, "depth": depth}, format="json")
            took = time.perf_counter() - t0
            assert response.status_code == 200, response.content
            level = response.json()["depth_used"]
            by_level.setdefault(f"{depth}@{level}", []).append(took)

    disk = _disk(Path(settings.DATA_DIR))
    if engine == "postgres":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_database_size(current_database())")
            disk += cursor.fetchone()[0]
    window = spent[-200:]
    return {
        "engine": engine,
        "facts": facts,
        "architects": architects,
        "prefilled": before,
        "prefill_seconds": prefill_seconds,
        "prefill": prefill,
        "remember_p50": statistics.median(window),
        "remember_p95": percentile(window, 95),
        "fill_seconds": fill_seconds,
        "lag_seconds": lag,
        "recall": {
            k: (statistics.median(v), percentile(v, 95), len(v)) for k, v in by_level.items()
        },
        "disk_per_1k": disk / (facts / 1000),
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "drainer_errors": drainer.errors,
        "graph": "embedded" if not settings.LIGHTRAG_URLS else "servers",
        "database": connection.settings_dict["NAME"] if engine == "postgres" else None,
    }


def _exponent(rows: list[dict], key) -> str:  # type: ignore[no-untyped-def]
    first, last = rows[0], rows[-1]
    a, b = key(first), key(last)
    if not a or not b or first["facts"] == last["facts"]:
        return "—"
    return f"{math.log(b / a) / math.log(last['facts'] / first['facts']):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="facts of one architect")
    parser.add_argument(
        "--architects-run", default="100x1000", help="ARCHITECTS x FACTS each, or 'none'"
    )
    parser.add_argument("--engine", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument(
        "--told", type=int, default=1000, help="facts told through HTTP and the stores; "
        "those before them are prefilled through the notes' write path",
    )  # fmt: skip
    parser.add_argument(
        "--lightrag-server", action="store_true",
        help="a real lightrag-server as the graph (one architect per configuration)",
    )  # fmt: skip
    parser.add_argument(
        "--prefill", choices=["writes", "bulk"], default="writes",
        help="the facts before the told ones: one write each through notes.note_create, or "
        "written in bulk and indexed by notes.reindex (same postings, no supersession marks)",
    )  # fmt: skip
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: facts,architects
    args = parser.parse_args()
    if args.one:
        facts, architects = (int(x) for x in args.one.split(","))
        figures = run_one(
            facts, architects, args.engine, args.pg, args.told, args.lightrag_server, args.prefill
        )
        print(json.dumps(figures))
        return
    plans = [(int(s), 1) for s in args.sizes.split(",") if s]
    if args.architects_run != "none":
        count, each = (int(x) for x in args.architects_run.split("x"))
        plans.append((count * each, count))
    rows = []
    for facts, architects in plans:
        print(f"{args.engine}: {facts} facts over {architects} architect(s)…", file=sys.stderr)
        done = subprocess.run(
            [sys.executable, __file__, "--engine", args.engine, "--pg", args.pg, "--one",
             f"{facts},{architects}", "--told", str(args.told), "--prefill", args.prefill,
             *(["--lightrag-server"] if args.lightrag_server else [])],
            capture_output=True, text=True, cwd=ROOT,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(done.stderr[-3000:])
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        if rows[-1].get("database"):  # measured: the bench's PostgreSQL database goes
            import psycopg

            with psycopg.connect(f"{args.pg}/postgres", autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{rows[-1]["database"]}"')
        if rows[-1]["prefilled"]:
            print(
                f"  {rows[-1]['prefilled']} prefilled ({rows[-1]['prefill']}) in "
                f"{rows[-1]['prefill_seconds']:.0f} s",
                file=sys.stderr,
            )
    graph = rows[-1]["graph"]
    calls = [str(r["server_model_calls"]) for r in rows if "server_model_calls" in r]
    print(
        f"\ncores: {os.cpu_count()}; engine: {args.engine}; graph: {graph}"
        f"{' (model calls on the server: ' + ', '.join(calls) + ')' if calls else ''}; "
        f"capture first (STORES_FILL=behind); "
        f"the last {args.told} facts of each told through HTTP, the rest prefilled "
        f"({'in bulk + reindex' if args.prefill == 'bulk' else 'one write each'})"
    )
    print(
        f"{'facts':>7} {'arch':>5} {'prefilled':>9} {'remember p50/p95 ms':>20} {'fill s':>7} {'lag s':>6} "
        f"{'disk/1k MB':>10} {'RSS MB':>7}  recall p50/p95 ms (n) by depth@level"
    )
    for r in rows:
        recalls = "; ".join(
            f"{k} {v[0] * 1000:.0f}/{v[1] * 1000:.0f} ({v[2]})"
            for k, v in sorted(r["recall"].items())
        )
        print(
            f"{r['facts']:>7} {r['architects']:>5} {r['prefilled']:>9} "
            f"{r['remember_p50'] * 1000:>9.1f} / "
            f"{r['remember_p95'] * 1000:>7.1f} {r['fill_seconds']:>7.0f} {r['lag_seconds']:>6.1f} "
            f"{r['disk_per_1k'] / 1e6:>10.2f} {r['rss_mb']:>7.0f}  {recalls}"
        )
    single = [r for r in rows if r["architects"] == 1]
    if len(single) >= 2:
        print(f"\ngrowth, facts^k from {single[0]['facts']} to {single[-1]['facts']}:")
        print(f"  remember p95 k={_exponent(single, lambda r: r['remember_p95'])}")
        print(f"  disk k={_exponent(single, lambda r: r['disk_per_1k'] * r['facts'])}")
        print(f"  RSS k={_exponent(single, lambda r: r['rss_mb'])}")
        for key in sorted(set(single[0]["recall"]) & set(single[-1]["recall"])):
            print(f"  recall {key} p50 k={_exponent(single, lambda r, k=key: r['recall'][k][0])}")


if __name__ == "__main__":
    main()
