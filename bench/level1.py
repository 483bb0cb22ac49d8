"""Level-1 recall latency over the grown tables, against a bare parameterised SELECT.

For each size (rows in one grown list table, shared by 100 architects; then notes of one
architect on the full-text index) it times, in the same process and on the same rows:
  - baseline:  one parameterised SELECT of exactly the rows level 1 returns, by their keys;
  - statement: level 1's one look at its indexes (``memory.knowledge.lookup``), the SQL bare;
  - level 1:   the level-1 search alone (that statement, the rows of a table that answers, the
               ranking's lifts, the answer built);
  - recall:    the whole recall service (parameters, run record, the ladder).
and prints p50/p95 in milliseconds, the ratios of p50 to the baseline, and how many queries
one level-1 search makes. Over the notes it also times a bare read of every posting of the asked
terms (what exact BM25 must read, fetched without counting or scoring) and prints the
statement's p50 as a ratio to it: the database's own cost of the same reading.

    .venv/bin/python bench/level1.py                    # SQLite and PostgreSQL, 1k/10k/100k
    .venv/bin/python bench/level1.py --engine sqlite --sizes 1000,10000

PostgreSQL is reached at --pg (default postgres://postgres@127.0.0.1:5432) in a database
``memory_bench`` that the script creates when missing and empties before each size.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from common import LOCOMO, locomo_questions, percentile, timed  # noqa: E402

ROLES = [
    "продакт-менеджер",
    "менеджер",
    "дизайнер",
    "аналитик",
    "разработчик",
    "тестировщик",
    "архитектор",
    "маркетолог",
    "юрист",
    "бухгалтер",
]
NAMES = ["Юля", "Дима", "Миша", "Оля", "Катя", "Петя", "Саша", "Лена", "Игорь", "Нина"]
ARCHITECTS = 100
QUESTION = "Кто у меня в команде продакт-менеджер?"


def setup(engine: str, pg: str) -> None:
    """Django on a fresh SQLite file in a folder of its own, or on ``memory_bench``."""
    data_dir = tempfile.mkdtemp(prefix="memory-bench-")
    os.environ["MEMORY_DATA_DIR"] = data_dir
    if engine == "postgres":
        import psycopg

        with psycopg.connect(f"{pg}/postgres", autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = 'memory_bench'"
            ).fetchone()
            if not exists:
                conn.execute("CREATE DATABASE memory_bench")
        os.environ["DATABASE_URL"] = f"{pg}/memory_bench"
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{data_dir}/bench.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory.settings")
    sys.path.insert(0, str(ROOT))

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    print(f"\n== {engine} ({connection.vendor}) ==")


def run_tables(sizes: list[int], repeats: int) -> None:
    """Level 1 over a grown list table shared by ``ARCHITECTS`` architects."""
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memory import language
    from memory.auth import Caller
    from memory.levels import RecallContext
    from memory.levels import relational as level1
    from memory.levels.relational.grown import MAX_ROWS
    from memory.models import Architect, ShapeEntry, ValueKeyword
    from memory.services.recall import recall
    from memory.shape import physical
    from memory.shape.tools import promote_to_list

    _header("rows", recall=True)
    for size in sizes:
        call_command("flush", interactive=False, verbosity=0)
        call_command("migrate", verbosity=0)
        with connection.cursor() as cursor:
            for table in connection.introspection.table_names(cursor):
                if table.startswith("mem_"):
                    cursor.execute(
                        f'DROP TABLE "{table}" CASCADE'
                        if connection.vendor == "postgresql"
                        else f'DROP TABLE "{table}"'
                    )
        architects = [Architect.objects.create(name=f"architect-{i}") for i in range(ARCHITECTS)]
        # Grow the shape through the real tool, then bulk-load the rest of the rows.
        for architect in architects:
            promote_to_list(
                architect=architect,
                kind="команда",
                items=[{"value": NAMES[0], "fields": {"роль": ROLES[0]}}],
            )
        model = physical.list_model("komanda", ["rol"])
        root = physical.root_model()
        roots = {r.architect_id: r.pk for r in root.objects.all()}
        entries = {
            (e.architect_id, e.kind): e
            for e in ShapeEntry.objects.all()
            if e.table == "mem_komanda"
        }
        role_lemmas = {role: language.keywords(role) for role in ROLES}
        name_lemmas = {name: language.keywords(name) for name in NAMES}
        from django.utils import timezone

        now = timezone.now()
        batch, per_architect = [], size // ARCHITECTS - 1
        for architect in architects:
            for j in range(per_architect):
                role, name = ROLES[(j + 1) % len(ROLES)], NAMES[(j * 7 + 1) % len(NAMES)]
                batch.append(
                    model(
                        architect_id=architect.pk,
                        root_id=roots[architect.pk],
                        created_at=now,
                        v_value=name,
                        k_value="stated",
                        b_value="{}",
                        v_rol=role,
                        k_rol="stated",
                        b_rol="{}",
                    )
                )
        model.objects.bulk_create(batch, batch_size=2000)
        keywords = []
        for row in (
            model.objects.exclude(pk__in=[])
            .only("id", "architect_id", "v_value", "v_rol")
            .iterator()
        ):
            table_entry = entries[(row.architect_id, "table")]
            column_entry = entries[(row.architect_id, "column")]
            keywords += [
                ValueKeyword(
                    architect_id=row.architect_id, entry=table_entry, row=row.pk, lemma=lemma
                )
                for lemma in name_lemmas.get(row.v_value, [])
            ]
            keywords += [
                ValueKeyword(
                    architect_id=row.architect_id, entry=column_entry, row=row.pk, lemma=lemma
                )
                for lemma in role_lemmas.get(row.v_rol, [])
            ]
        ValueKeyword.objects.bulk_create(keywords, batch_size=5000)
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")  # as autovacuum leaves it: index-only scans
        total = model.objects.count()

        alice = architects[0]
        caller = Caller(architect=alice, name="bench", channel="api", depth_cap="standard")
        ctx = RecallContext.of(
            architect=alice,
            text=QUESTION,
            scope=[],
            lang="ru",
        )
        with CaptureQueriesContext(connection) as captured:
            answer = level1.search(ctx)
        returned = [r["row"] for r in answer.data["tables"][0]["rows"]]
        expected = list(
            model.objects.filter(architect_id=alice.pk, v_rol=ROLES[0]).values_list("pk", flat=True)
        )
        # Level 1 returns at most MAX_ROWS rows (it says when there are more): compare those.
        assert len(returned) == min(len(expected), MAX_ROWS)
        assert set(returned) <= set(expected), "level 1 returned rows the question does not ask for"

        placeholders = ", ".join(["%s"] * len(returned))
        sql = (
            'SELECT "id", "value", "value__kind", "value__basis", "rol", "rol__kind", "rol__basis", "created_at" '
            f'FROM "mem_komanda" WHERE "architect_id" = %s AND "id" IN ({placeholders})'
        )

        def baseline(
            sql: str = sql, alice: Architect = alice, returned: list[int] = returned
        ) -> None:
            with connection.cursor() as cursor:
                cursor.execute(sql, [alice.pk, *returned])
                cursor.fetchall()

        base = timed(baseline, repeats, warmup=5)
        bare = timed(_statement(ctx, level1.SEARCHED), repeats, warmup=5)
        lvl = timed(lambda ctx=ctx: level1.search(ctx), repeats, warmup=5)
        full = timed(lambda caller=caller: recall(caller=caller, data={"text": QUESTION}), repeats)
        _row(total, len(returned), len(captured.captured_queries), base, bare, lvl, full)


def run_notes(sizes: list[int], repeats: int) -> None:
    """Level 1 over the notes' full-text index (issue «speed and scale»: 1k/10k/100k notes of
    one architect, LoCoMo's turns cycled), against a bare indexed SELECT of the notes it
    returns; and how many queries one level-1 search makes."""
    import json

    from django.core.management import call_command
    from django.db import connection

    from memory import language
    from memory.knowledge.notes import recount
    from memory.models import Architect, Note, NoteKeyword

    turns = [
        turn["text"]
        for sample in json.loads(LOCOMO.read_text())
        for key, session in sample["conversation"].items()
        if key.startswith("session_") and isinstance(session, list)
        for turn in session
    ]
    questions = locomo_questions()
    print(f"\n-- notes ({connection.vendor}): level 1 on the full-text index --")
    print("   each size is asked a LoCoMo question, then a whole chat turn (many more terms)")
    _header("notes", recall=False)
    for size in sizes:
        call_command("flush", interactive=False, verbosity=0)
        architect = Architect.objects.create(name="notes-bench")
        notes, postings = [], []
        for i in range(size):
            text = turns[i % len(turns)]
            terms = language.terms(text)
            note = Note(architect=architect, text=text, sender="bench", length=len(terms))
            note.talk = note.pk
            notes.append(note)
            counts: dict[str, int] = {}
            for term in terms:
                counts[term] = counts.get(term, 0) + 1
            postings += [
                NoteKeyword(
                    architect=architect,
                    note=note,
                    lemma=lemma[:64],
                    own=n,
                    length=note.length,
                )
                for lemma, n in counts.items()
            ]
        Note.objects.bulk_create(notes, batch_size=2000)
        NoteKeyword.objects.bulk_create(postings, batch_size=5000)
        recount(architect.pk)  # written around note_create: its statistics, counted once
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")  # as autovacuum leaves it: index-only scans
        asked = [
            ("a LoCoMo question", questions[(size // 2) % len(questions)]),
            ("a whole chat turn", turns[(size // 2) % len(turns)]),
        ]
        for what, question in asked:
            _ask_notes(architect, what, question, size, repeats)


def _ask_notes(architect, what: str, question: str, size: int, repeats: int) -> None:  # type: ignore[no-untyped-def]
    """One question over the notes: level 1 against a bare SELECT of the notes it returned."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memory.levels import RecallContext
    from memory.levels import relational as level1
    from memory.models import Note, NoteKeyword

    ctx = RecallContext.of(
        architect=architect,
        text=question,
        scope=[],
        lang="en",
    )
    with CaptureQueriesContext(connection) as captured:
        answer = level1.search(ctx)
    returned = [
        str(i.get("note"))
        for i in (answer.data or {}).get("notes", []) or answer.candidates
        if i.get("note")
    ]
    if not returned:
        print(f"{size:>7} {0:>8}: level 1 returned no note for {what}; nothing to compare")
        return
    table = Note._meta.db_table
    placeholders = ", ".join(["%s"] * len(returned))
    # By primary key alone: the architect's own index would lead the planner to scan.
    sql = (
        f'SELECT "id", "text", "scope", "created_at" FROM "{table}" WHERE "id" IN ({placeholders})'
    )

    ids = [
        Note._meta.pk.get_db_prep_value(Note._meta.pk.to_python(r), connection) for r in returned
    ]

    def baseline(sql: str = sql, ids: list = ids) -> int:
        with connection.cursor() as cursor:
            cursor.execute(sql, ids)
            return len(cursor.fetchall())

    assert baseline() == len(returned), "the baseline must read the very rows level 1 gave"

    # The database's own cost of what exact BM25 must read: every posting of the asked terms,
    # by the index, fetched bare (no counting, no scoring).
    asked = list(dict.fromkeys(ctx.keywords))
    postings_sql = (
        f'SELECT "note_id", "own", "near", "length", "near_length" FROM '
        f'"{NoteKeyword._meta.db_table}" WHERE "architect_id" = %s AND "lemma" IN '
        f"({', '.join(['%s'] * len(asked))})"
    )

    def postings(sql: str = postings_sql, params: list = [architect.pk, *asked]) -> int:  # noqa: B006
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return len(cursor.fetchall())

    base = timed(baseline, repeats)
    read = timed(postings, repeats)
    bare = timed(_statement(ctx, level1.SEARCHED), repeats)
    lvl = timed(lambda ctx=ctx: level1.search(ctx), repeats)
    _row(size, len(returned), len(captured.captured_queries), base, bare, lvl)
    print(f"{'':>7} ↑ {what}, {len(ctx.keywords)} terms")
    print(
        f"{'':>7}   a bare read of the {postings()} postings of those terms: p50 "
        f"{statistics.median(read):.2f} ms; the statement is "
        f"×{statistics.median(bare) / statistics.median(read):.1f} of it"
    )


def _statement(ctx, limit: int):  # type: ignore[no-untyped-def]
    """Level 1's one statement, executed and fetched bare (no JSON read, no answer built)."""
    from django.db import connection

    from memory.knowledge import lookup

    sql, params = lookup.statement(
        ctx.architect, ctx.keywords, limit=limit, scope=ctx.scope, shape=True
    )

    def run() -> int:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return len(cursor.fetchall())

    return run


def _header(what: str, *, recall: bool) -> None:
    line = (
        f"{what:>7} {'returned':>8} {'queries':>7} | {'baseline p50/p95 ms':>19} | "
        f"{'statement p50/p95 ms':>20} {'×':>5} | {'level1 p50/p95 ms':>18} {'×':>5}"
    )
    print(line + (f" | {'recall p50/p95 ms':>18} {'×':>5}" if recall else ""))


def _row(size, returned, queries, base, bare, lvl, full=None) -> None:  # type: ignore[no-untyped-def]
    """One size: p50/p95 of each, and each p50 as a ratio to the baseline's."""
    b50 = statistics.median(base)

    def cell(times: list[float], width: int) -> str:
        p50 = statistics.median(times)
        figures = f"{p50:.3f} / {percentile(times, 95):.3f}".rjust(width)
        return f"{figures} {p50 / b50:>5.0f}"

    line = (
        f"{size:>7} {returned:>8} {queries:>7} | "
        f"{f'{b50:.3f} / {percentile(base, 95):.3f}':>19} | {cell(bare, 20)} | {cell(lvl, 18)}"
    )
    print(line + (f" | {cell(full, 18)}" if full is not None else ""))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--engine", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument(
        "--only", choices=["tables", "notes"], help="one of the two benches (both by default)"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.engine == "both":
        for engine in ("sqlite", "postgres"):
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--engine",
                    engine,
                    "--sizes",
                    args.sizes,
                    "--repeats",
                    str(args.repeats),
                    "--pg",
                    args.pg,
                    *(["--only", args.only] if args.only else []),
                ],
                check=True,
            )
        return
    setup(args.engine, args.pg)
    if args.only != "notes":
        run_tables(sizes, args.repeats)
    if args.only != "tables":
        run_notes(sizes, max(5, args.repeats // 4))


if __name__ == "__main__":
    main()
