"""LoCoMo through the REST API, as a caller sees it: every turn remembered over HTTP, every
question with evidence recalled at ``standard`` and ``deep`` against a running memory.

The same measure as ../shared/tools/locomo_rest.py (one architect per conversation, each turn
told as "<speaker>: <text>" with said_at its session's time, a second a turn; the outbox waited
empty before the questions), plus what issue 30 asks of it: the turns told with the shared
photo's caption as well (``--captions``, as bench/retrieval.py tells them in process), how
often the answer says ``found``, and, when it does, whether an evidence turn is among the notes
it returns.

    make run &                                           # embedded defaults, port 3700
    .venv/bin/python bench/locomo_rest.py http://127.0.0.1:3700 --captions --json out.json

Keys are made with ``manage.py memory_key`` in this checkout, on the data folder the server
uses (MEMORY_DATA_DIR, DATABASE_URL as for ``make run``), and the outbox is read there; or
give ``--keys`` (one a conversation) and ``--no-outbox-wait`` for a memory that fills its
stores in the request. Prints figures and the goals beside them; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import LOCOMO, ROOT, locomo_turns, percentile, post_verb, returned_notes  # noqa: E402

DEPTHS = ("standard", "deep")
KS = (1, 5, 10)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
GOALS = {  # issue 30, at the REST API on all ten conversations
    ("deep", "recall_any@10"): 0.90,
    ("standard", "recall_any@10"): 0.85,
    ("deep", "recall_any@5"): 0.80,
    ("deep", "found"): 0.85,
    ("deep", "evidence_when_found"): 0.90,
}


def make_key(architect: str) -> str:
    """A key of a new architect, made as a user makes one (the last line memory_key prints)."""
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "memory_key",
            "--architect",
            architect,
            "--max-depth",
            "deep",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip().splitlines()[-1]


def outbox_reader() -> Any:
    """A count of the outbox rows still queued, read from the data folder the server uses
    (MEMORY_DATA_DIR, DATABASE_URL as for ``make run``): Django is set up here, once, only for
    a run that waits for the outbox."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory.settings")
    import django

    django.setup()
    from memory.models import OutboxItem

    return OutboxItem.objects.filter(status="queued").count


def wait_for_outbox(queued: Any, limit: float) -> float:
    """Seconds until nothing is queued (``limit`` at most), saying every minute how many are."""
    started = last = time.monotonic()
    while (left := queued()) and time.monotonic() - started < limit:
        if time.monotonic() - last >= 60:
            print(f"  {left} outbox rows still queued", file=sys.stderr, flush=True)
            last = time.monotonic()
        time.sleep(2)
    return time.monotonic() - started


class Tally:
    def __init__(self) -> None:
        self.questions = 0
        self.any = Counter()
        self.found = 0
        self.evidence_when_found = 0
        self.ms: list[float] = []
        self.depth_used: Counter = Counter()
        self.by_category: dict[int, Counter] = defaultdict(Counter)

    def add(self, answer: dict[str, Any], ms: float, got: list[str], category: int) -> None:
        self.questions += 1
        self.ms.append(ms)
        self.depth_used[str(answer.get("depth_used"))] += 1
        found = bool((answer.get("answer") or {}).get("found"))
        self.found += found
        self.evidence_when_found += found and any(got)
        for k in KS:
            self.any[k] += any(got[:k])
        self.by_category[category]["n"] += 1
        self.by_category[category]["at10"] += any(got[:10])

    def row(self) -> dict[str, Any]:
        n = max(1, self.questions)
        return {
            "questions": self.questions,
            **{f"recall_any@{k}": round(self.any[k] / n, 3) for k in KS},
            "found": round(self.found / n, 3),
            "evidence_when_found": round(self.evidence_when_found / max(1, self.found), 3),
            "p50_ms": round(statistics.median(self.ms), 1) if self.ms else None,
            "p95_ms": round(percentile(self.ms, 95), 1) if self.ms else None,
            "depth_used": dict(self.depth_used),
            "at10_by_category": {
                CATEGORIES.get(c, str(c)): round(t["at10"] / t["n"], 3)
                for c, t in sorted(self.by_category.items())
            },
        }


def run(args: argparse.Namespace) -> dict[str, Any]:
    samples = json.loads(Path(args.locomo).read_text())
    chosen = (
        range(len(samples))
        if args.conversations == "all"
        else [int(x) - 1 for x in args.conversations.split(",")]
    )
    keys = args.keys.split(",") if args.keys else []
    stamp = int(time.time())
    totals = {d: Tally() for d in DEPTHS}
    per_conversation: dict[int, dict[str, float]] = {}
    remember_ms: list[float] = []
    errors = 0
    drained: list[float] = []
    queued = outbox_reader() if args.outbox_wait else None
    for position, index in enumerate(chosen):
        sample = samples[index]
        label = "captions" if args.captions else "text"
        key = keys[position] if keys else make_key(f"locomo-rest-{label}-{index + 1}-{stamp}")
        turns = locomo_turns(sample, captions=args.captions)[: args.turns]
        dia_of: dict[str, str] = {}
        for turn in turns:
            code, ms, answer = post_verb(
                args.base, key, "remember", {"text": turn.text, "said_at": turn.said_at}
            )
            remember_ms.append(ms)
            if code != 200:
                errors += 1
                continue
            dia_of[answer["stored"]["note"]] = turn.dia
        if queued is not None:
            drained.append(round(wait_for_outbox(queued, args.outbox_limit), 1))
        told = set(dia_of.values())
        mine = {d: Tally() for d in DEPTHS}
        for qa in sample["qa"]:
            evidence = {e.strip() for e in qa.get("evidence", []) if e.strip()}
            if not evidence or (args.turns is not None and not evidence <= told):
                continue  # no evidence, or some of it beyond the turns told (--turns)
            for depth in DEPTHS:
                code, ms, answer = post_verb(
                    args.base, key, "recall", {"text": qa["question"], "depth": depth}
                )
                errors += code != 200
                got = [dia_of.get(n) in evidence for n in returned_notes(answer)]
                for tally in (mine[depth], totals[depth]):
                    tally.add(answer, ms, got, int(qa.get("category", 0)))
        per_conversation[index + 1] = {d: mine[d].row()["recall_any@10"] for d in DEPTHS}
        print(
            f"conversation {index + 1}: {len(dia_of)} turns, "
            f"{mine['deep'].questions} questions, @10 {per_conversation[index + 1]}"
            + (f", outbox empty after {drained[-1]} s" if drained else ""),
            file=sys.stderr,
            flush=True,
        )
    return {
        "captions": args.captions,
        "conversations": [i + 1 for i in chosen],
        "turns": len(remember_ms),
        "errors": errors,
        "remember_p50_ms": round(statistics.median(remember_ms), 1) if remember_ms else None,
        "remember_p95_ms": round(percentile(remember_ms, 95), 1) if remember_ms else None,
        "outbox_empty_after_s": drained,
        "per_conversation_at10": per_conversation,
        **{d: totals[d].row() for d in DEPTHS},
    }


def show(figures: dict[str, Any]) -> None:
    told = "with the photos' captions" if figures["captions"] else "the turn text alone"
    print(
        f"LoCoMo through the REST API, {told}: conversations {figures['conversations']}, "
        f"{figures['turns']} turns, {figures['errors']} errors; remember p50/p95 "
        f"{figures['remember_p50_ms']}/{figures['remember_p95_ms']} ms"
    )
    if figures["outbox_empty_after_s"]:
        print(f"outbox empty after (s, per conversation): {figures['outbox_empty_after_s']}")
    header = ["@1", "@5", "@10", "found", "ev|found", "p50 ms", "p95 ms"]
    print(f"{'depth':<10} {'questions':>9} " + " ".join(f"{h:>8}" for h in header))
    for depth in DEPTHS:
        r = figures[depth]
        cells = [
            *(r[f"recall_any@{k}"] for k in KS),
            r["found"],
            r["evidence_when_found"],
            r["p50_ms"],
            r["p95_ms"],
        ]
        print(f"{depth:<10} {r['questions']:>9} " + " ".join(f"{c:>8}" for c in cells))
        print(f"  @10 by category: {r['at10_by_category']}; answered at: {r['depth_used']}")
    at10 = [v["deep"] for v in figures["per_conversation_at10"].values()]
    if at10:
        print(f"deep @10 per conversation: {min(at10):.3f}–{max(at10):.3f}")
    print("goals (issue 30, all ten conversations):")
    for (depth, measure), goal in GOALS.items():
        value = figures[depth][measure]
        print(
            f"  {depth} {measure} ≥ {goal:.2f}: {value:.3f} {'met' if value >= goal else 'not met'}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="the memory's address, e.g. http://127.0.0.1:3700")
    parser.add_argument("--conversations", default="all", help="all, or numbers from 1: 1,2")
    parser.add_argument("--captions", action="store_true", help="tell the photos' captions too")
    parser.add_argument("--turns", type=int, default=None, help="each conversation's first N")
    parser.add_argument("--keys", default="", help="one key a conversation (else memory_key)")
    parser.add_argument("--no-outbox-wait", dest="outbox_wait", action="store_false")
    parser.add_argument("--outbox-limit", type=float, default=3600, help="seconds to wait")
    parser.add_argument("--locomo", default=str(LOCOMO))
    parser.add_argument("--json", default="", help="write the figures here as well")
    args = parser.parse_args()
    if not Path(args.locomo).exists():
        parser.error(f"no LoCoMo file at {args.locomo} (../shared/data/locomo/locomo10.json)")
    figures = run(args)
    show(figures)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
