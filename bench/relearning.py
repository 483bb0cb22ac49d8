"""Does an expensive answer become a cheap one? The same question asked twice.

The Russian set's facts (bench/retrieval_corpus/ru.json) are remembered into one memory through
the project's own ``remember``; every paraphrase question (its answer shares no word with the
fact, so standard depth cannot find it) is asked:

  1. at ``standard`` — before any relearning: what the cheap levels could do on their own;
  2. at ``deep`` — the first, expensive ask; when level 4 answers, the relearning cycle keeps
     an artifact and a summary (settings.RELEARNING, sync);
  3. at ``standard`` again — the second ask.

Printed: how many of the deep answers were kept, how many second asks were answered at level ≤ 3,
whether the second answer still names the expected fact, and both asks' costs from their runs
(model turns, tokens, seconds) with the ratio. The questions whose answer was never told are
asked at standard before and after the relearning pass: the false-found rate must not grow.

    .venv/bin/python bench/relearning.py
    .venv/bin/python bench/relearning.py --cases 20

Prints figures, asserts nothing. Level 5 (research, with model turns) is not built yet: the first
ask here is level 4's, which costs embeddings and no model turn.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import setup_django  # noqa: E402

RUSSIAN = Path(__file__).resolve().parent / "retrieval_corpus" / "ru.json"


def _cost(answer: dict[str, Any], seconds: float) -> dict[str, Any]:
    from memory.models import Run

    run = Run.objects.get(pk=answer["run"])
    return {
        "level": answer["depth_used"],
        "found": bool(answer["answer"]["found"]),
        "turns": run.model_turns,
        "tokens": run.tokens_in + run.tokens_out,
        "seconds": seconds,
    }


def _ask(
    caller: Any, question: str, depth: str, scope: list[dict[str, Any]] | None = None
) -> tuple[dict[str, Any], float]:
    from retrieval import recall

    started = time.perf_counter()
    answer = recall(caller, question, depth, scope)
    return answer, time.perf_counter() - started


def measure(limit: int | None = None) -> dict[str, Any]:
    from retrieval import _caller, _spread, remember, returned_notes

    corpus = json.loads(RUSSIAN.read_text())
    caller = _caller("relearning")
    ids = {f["id"]: remember(caller, f["text"], f.get("scope") or None) for f in corpus["facts"]}
    paraphrases = _spread([c for c in corpus["cases"] if c["kind"] == "paraphrase"], limit)
    never_told = [c for c in corpus["cases"] if not c.get("expect")]

    def false_found() -> int:
        """bench/retrieval.py's rule: found, unless it is parameter_dependent on a fact the
        case names as depending on the missing scope."""
        wrong = 0
        for case in never_told:
            answer, _ = _ask(caller, case["question"], "standard", case.get("scope") or None)
            dependent = {ids[f] for f in case.get("dependent", [])}
            got = returned_notes(answer)
            wrong += bool(answer["answer"]["found"]) and not (
                answer["kind"] == "parameter_dependent" and got[:1] and got[0] in dependent
            )
        return wrong

    false_before = false_found()
    rows = []
    for case in paraphrases:
        expect = {ids[f] for f in case.get("expect", [])}
        before, before_s = _ask(caller, case["question"], "standard")
        first, first_s = _ask(caller, case["question"], "deep")
        second, second_s = _ask(caller, case["question"], "standard")
        rows.append(
            {
                "before": _cost(before, before_s),
                "first": _cost(first, first_s),
                "kept": "summary" in first.get("relearned", {}),
                "second": _cost(second, second_s),
                "second_right": bool(expect & set(returned_notes(second)[:1])),
            }
        )
    false_after = false_found()
    return {
        "facts": len(ids),
        "questions": len(rows),
        "rows": rows,
        "unanswerable": len(never_told),
        "false_before": false_before,
        "false_after": false_after,
    }


def _sum(rows: list[dict[str, Any]], ask: str, key: str) -> float:
    return sum(r[ask][key] for r in rows)


def report(figures: dict[str, Any]) -> None:
    rows = figures["rows"]
    kept = [r for r in rows if r["kept"]]
    cheap = [r for r in kept if r["second"]["found"] and r["second"]["level"] <= 3]
    print(f"facts remembered: {figures['facts']}; paraphrase questions: {figures['questions']}")
    print(
        "standard before any relearning: found "
        f"{sum(r['before']['found'] for r in rows)} of {len(rows)}"
    )
    print(
        f"deep (first ask): answered {sum(r['first']['found'] for r in rows)}, at level 4 "
        f"{sum(r['first']['found'] and r['first']['level'] == 4 for r in rows)}, kept by the "
        f"relearning cycle {len(kept)}"
    )
    print(
        f"standard again (second ask) of the kept: answered at level <= 3 {len(cheap)} of "
        f"{len(kept)}; the expected fact first in {sum(r['second_right'] for r in kept)}"
    )
    if kept:
        print("costs over the kept questions      first ask    second ask    ratio")
        for key, unit in (("turns", ""), ("tokens", ""), ("seconds", " s")):
            first, second = _sum(kept, "first", key), _sum(kept, "second", key)
            ratio = (
                "inf"
                if second == 0 and first > 0
                else "-"
                if second == 0
                else f"{first / second:.1f}x"
            )
            print(f"  {key:<32} {first:>9.3f}{unit:<2} {second:>9.3f}{unit:<2}   {ratio}")
        p50 = (
            statistics.median(r["first"]["seconds"] for r in kept),
            statistics.median(r["second"]["seconds"] for r in kept),
        )
        print(
            f"  seconds p50 per question          {p50[0]:>9.3f} s {p50[1]:>9.3f} s   "
            f"{p50[0] / p50[1]:.1f}x"
        )
    print(
        f"false found at standard on never-told questions: {figures['false_before']} of "
        f"{figures['unanswerable']} before relearning, {figures['false_after']} after"
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=None, help="paraphrase questions asked")
    args = parser.parse_args(argv)
    setup_django("relearning")
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from django.conf import settings

    print(f"relearning: {settings.RELEARNING}")
    figures = measure(args.cases)
    report(figures)
    return figures


if __name__ == "__main__":
    main()
