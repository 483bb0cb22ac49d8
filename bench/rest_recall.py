"""Recall over REST against a running memory (`make run`), as a caller sees it: LoCoMo's
questions asked of one architect at each depth, p50/p95 of the whole request and the level
that answered (PASSPORT.md «Скорость и масштаб»). The architect is whatever the memory holds —
e.g. the 10,000 notes `bench/capture.py` leaves in its data folder:

    MEMORY_DATA_DIR=/tmp/memory-bench-capture-XXXX make run &
    MEMORY_DATA_DIR=/tmp/memory-bench-capture-XXXX .venv/bin/python manage.py memory_key \\
        --architect fill-behind --max-depth deep          # prints a key
    .venv/bin/python bench/rest_recall.py http://127.0.0.1:3700 KEY --questions 300

``--questions-file`` asks your own questions instead (one a line): LoCoMo is read from
../shared/data beside the checkout, which a fresh clone does not have.

Ask once the stores have caught up (nothing queued in the outbox), so levels 3 and 4 see every
note; each question is asked once a depth, one at a time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import LOCOMO, locomo_questions, percentile, post_verb  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="the memory's address, e.g. http://127.0.0.1:3700")
    parser.add_argument("key", help="an API key of the architect asked")
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--depths", default="standard,deep")
    parser.add_argument(
        "--questions-file", type=Path, help="ask these questions (one a line), not LoCoMo's"
    )
    args = parser.parse_args()
    if args.questions_file:
        asked = [q.strip() for q in args.questions_file.read_text().splitlines() if q.strip()]
        source = str(args.questions_file)
        if not asked:
            parser.error(f"{args.questions_file} holds no question")
    elif LOCOMO.exists():
        asked, source = locomo_questions(), "LoCoMo"
    else:
        parser.error(f"{LOCOMO} is absent: pass --questions-file")
    questions = asked[:: max(1, len(asked) // args.questions)][: args.questions]
    print(f"{len(questions)} questions a depth ({source}), over REST at {args.base}")
    print(f"{'depth':>9} {'p50 ms':>7} {'p95 ms':>7} {'errors':>7}  answered at level")
    for depth in args.depths.split(","):
        times, levels, errors = [], {}, 0
        for question in questions:
            code, ms, answer = post_verb(
                args.base, args.key, "recall", {"text": question, "depth": depth}
            )
            if code != 200:
                errors += 1
                continue
            times.append(ms)
            level = str(answer.get("depth_used"))
            levels[level] = levels.get(level, 0) + 1
        print(
            f"{depth:>9} {statistics.median(times):>7.0f} {percentile(times, 95):>7.0f} "
            f"{errors:>7}  {dict(sorted(levels.items()))}",
            flush=True,
        )
    print("goal: standard p95 ≤ 100 ms at 10k notes of one architect (level 3 included)")


if __name__ == "__main__":
    main()
