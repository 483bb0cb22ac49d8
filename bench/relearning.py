"""Does an expensive answer become a cheap one? The same question asked twice.

Each personal set's facts (bench/retrieval_corpus/ru.json, en.json) are remembered into one
memory through the project's own ``remember``; every paraphrase question (most share at most one
content word with their fact, so standard depth rarely finds them) is asked:

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
    .venv/bin/python bench/relearning.py --research   # level 5 with the project's fake model

Then level 3: every answerable question of the Russian set asked twice at ``standard``, in a
fresh memory for each way — the relearning cycle keeping answers from level 4 up (a graph answer
is paid again) and from level 3 up (it is kept): how many the graph answered, how many were kept,
how many second asks came from level 1, and both asks' p50 seconds (``--level3``: only this).

``--research``: the owner's kind of question ("which of my friends could have known X?") over
friends in a grown table and what each did; the first ask is ``extreme`` — levels 1–4 find
nothing, the research job runs (Celery's eager mode, in this process) and the project's fake
`claude` (tests/fake_claude, a scripted CLI behind the real MCP server) names the related terms;
the second ask is ``standard``. Printed: model turns, tokens and seconds of each, and the ratio.

Prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import returned_notes, setup_django  # noqa: E402

RUSSIAN = Path(__file__).resolve().parent / "retrieval_corpus" / "ru.json"
ENGLISH = Path(__file__).resolve().parent / "retrieval_corpus" / "en.json"


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


def measure(limit: int | None = None, path: Path = RUSSIAN) -> dict[str, Any]:
    from retrieval import _caller, _spread, remember

    corpus = json.loads(path.read_text())
    caller = _caller(f"relearning-{path.stem}")
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
                "kept_right": bool(expect & _basis(first.get("relearned", {}))),
                "second": _cost(second, second_s),
                "second_right": bool(expect & set(returned_notes(second)[:1])),
            }
        )
    false_after = false_found()
    return {
        "set": path.stem,
        "facts": len(ids),
        "questions": len(rows),
        "rows": rows,
        "unanswerable": len(never_told),
        "false_before": false_before,
        "false_after": false_after,
    }


def _basis(relearned: dict[str, Any]) -> set[str]:
    """The notes a kept summary rests on (none when nothing was kept)."""
    from memory.models import Summary

    summary = Summary.objects.filter(pk=relearned.get("summary")).first()
    return {str(f["note"]) for f in (summary.basis if summary else []) if f.get("note")}


def _sum(rows: list[dict[str, Any]], ask: str, key: str) -> float:
    return sum(r[ask][key] for r in rows)


def print_costs(kept: list[dict[str, Any]]) -> None:
    """Both asks' summed costs over the kept questions, and the ratio (inf when the second is 0)."""
    print("costs over the kept questions      first ask    second ask    ratio")
    for key, unit in (("turns", ""), ("tokens", ""), ("seconds", " s")):
        first, second = _sum(kept, "first", key), _sum(kept, "second", key)
        if second == 0:
            ratio = "inf" if first > 0 else "-"
        else:
            ratio = f"{first / second:.1f}x"
        print(f"  {key:<32} {first:>9.3f}{unit:<2} {second:>9.3f}{unit:<2}   {ratio}")


def report(figures: dict[str, Any]) -> None:
    rows = figures["rows"]
    kept = [r for r in rows if r["kept"]]
    cheap = [r for r in kept if r["second"]["found"] and r["second"]["level"] <= 3]
    print(
        f"\n{figures['set']} set — facts remembered: {figures['facts']}; paraphrase questions: "
        f"{figures['questions']}"
    )
    print(
        "standard before any relearning: found "
        f"{sum(r['before']['found'] for r in rows)} of {len(rows)}"
    )
    print(
        f"deep (first ask): answered {sum(r['first']['found'] for r in rows)}, at level 4 "
        f"{sum(r['first']['found'] and r['first']['level'] == 4 for r in rows)}, kept by the "
        f"relearning cycle {len(kept)} (resting on the expected fact: "
        f"{sum(r['kept_right'] for r in kept)})"
    )
    print(
        f"standard again (second ask) of the kept: answered at level <= 3 {len(cheap)} of "
        f"{len(kept)}; the expected fact first in {sum(r['second_right'] for r in kept)}"
    )
    if kept:
        print_costs(kept)
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
    print(
        "goal: a relearned paraphrase is answered at level <= 3 with 0 model turns the second time"
    )


# --- level 3: kept or paid again -------------------------------------------------------------------


def measure_level3(from_level: int, path: Path = RUSSIAN) -> dict[str, Any]:
    """Every answerable question of a set asked twice at ``standard`` in a fresh memory, with the
    relearning cycle keeping answers from ``from_level`` up (settings.RELEARN_FROM_LEVEL): what a
    question the graph answered (level 3) costs the second time, kept or not."""
    from django.conf import settings
    from retrieval import _caller, remember

    corpus = json.loads(path.read_text())
    caller = _caller(f"relearning-l3-{from_level}-{path.stem}")
    ids = {f["id"]: remember(caller, f["text"], f.get("scope") or None) for f in corpus["facts"]}
    cases = [c for c in corpus["cases"] if c.get("expect")] + _joined(corpus)
    saved = settings.RELEARN_FROM_LEVEL
    settings.RELEARN_FROM_LEVEL = from_level
    rows = []
    try:
        for case in cases:
            scope = case.get("scope") or None
            first, first_s = _ask(caller, case["question"], "standard", scope)
            if not (first["answer"]["found"] and first["depth_used"] == 3):
                continue
            second, second_s = _ask(caller, case["question"], "standard", scope)
            expect = {ids[f] for f in case["expect"]}
            rows.append(
                {
                    "first": _cost(first, first_s),
                    "kept": "summary" in first.get("relearned", {}),
                    "second": _cost(second, second_s),
                    "second_right": bool(expect & set(returned_notes(second))),
                }
            )
    finally:
        settings.RELEARN_FROM_LEVEL = saved
    return {"set": path.stem, "from_level": from_level, "rows": rows}


def _joined(corpus: dict[str, Any], pairs: int = 24) -> list[dict[str, Any]]:
    """Questions the graph is for: two of the set's direct questions about different facts
    asked as one («Телефон прораба в Сочи, и кто ведёт смету по дому в Казани?»). No single
    note holds both halves, so level 1 rarely answers; the graph joins the notes it names."""
    direct = [c for c in corpus["cases"] if c["kind"] == "distractor" and c.get("expect")]
    out = []
    for first, second in zip(direct, direct[1:] + direct[:1], strict=True):
        if set(first["expect"]) & set(second["expect"]):
            continue
        tail = second["question"][0].lower() + second["question"][1:]
        question = f"{first['question'].rstrip('?')}, и {tail}"
        out.append({"question": question, "expect": first["expect"] + second["expect"]})
    return out[:pairs]


def report_level3(both: list[dict[str, Any]]) -> None:
    print("\nlevel 3 answers at standard, asked twice (the same facts, a fresh memory each way)")
    print(
        "  relearn from   answered at 3   kept   2nd at level 1   2nd evidence   "
        "1st p50 s   2nd p50 s"
    )
    for figures in both:
        rows = figures["rows"]
        if not rows:
            print(f"  level {figures['from_level']}: no question answered at level 3")
            continue
        p50 = [statistics.median(r[ask]["seconds"] for r in rows) for ask in ("first", "second")]
        print(
            f"  level {figures['from_level']:<8} {len(rows):>13} {sum(r['kept'] for r in rows):>6} "
            f"{sum(r['second']['level'] == 1 for r in rows):>16} "
            f"{sum(r['second_right'] for r in rows):>14} {p50[0]:>11.3f} {p50[1]:>11.3f}"
        )


# --- level 5, with the fake model -----------------------------------------------------------------

FRIENDS = ["Денис", "Миша", "Оля"]
TOLD = [
    "Мой друг Денис с 1992 по 1994 год служил в Кремле.",
    "Миша в 2019 году два месяца жил в Париже.",
    "Оля работала переводчицей на фестивале в Каннах.",
    "Я люблю зелёный чай с жасмином.",
]
RESEARCH_CASES = [
    ("Кто из моих друзей мог знать Ельцина?", "Ельцин", ["Кремль", "президент", "Москва"]),
    ("Кто из моих друзей мог видеть Эйфелеву башню?", "Эйфелев", ["Париж", "Франция"]),
    ("Кто из моих друзей мог встретить Депардье?", "Депардье", ["Канны", "кино", "Франция"]),
]


@contextmanager
def _fake_model(folder: Path) -> Iterator[None]:
    """The project's fake `claude` on PATH, scripted to name the related terms per question;
    the settings and the environment are put back after."""
    from unittest import mock

    from django.test import override_settings

    from memory import model

    fake = Path(__file__).resolve().parent.parent / "tests" / "fake_claude" / "fake_claude.py"
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    wrapper = bin_dir / "claude"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{fake}" "$@"\n')
    wrapper.chmod(0o755)
    rules = [
        {
            "match": re.escape(f"Вопрос: «{question}»\nНеизвестное слово"),
            "system_match": "deep-analysis",
            "result": json.dumps({"terms": terms}, ensure_ascii=False),
        }
        for question, _, terms in RESEARCH_CASES
    ]
    rules.append(  # step 3 of the relearning cycle: with a model, the model writes the summary
        {
            "match": "Факты:",
            "system_match": "relearning-cycle",
            "result": json.dumps(
                {"summary": "Связь найдена по заметкам архитектора; основание — в фактах."},
                ensure_ascii=False,
            ),
        }
    )
    rules.append(
        {
            "match": "Каталог:",
            "result": json.dumps(
                {"found": False, "kind": "probabilistic", "text": "нет"}, ensure_ascii=False
            ),
        }
    )
    script = folder / "script.json"
    script.write_text(json.dumps({"rules": rules}, ensure_ascii=False))
    environ = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_CLAUDE_HOME": str(folder / "home"),
        "FAKE_CLAUDE_SCRIPT": str(script),
    }
    with (
        mock.patch.dict(os.environ, environ),
        override_settings(
            MODEL_BACKEND="claude",
            CLAUDE_BIN="claude",
            CLAUDE_WORKDIR=folder / "think",
            CELERY_TASK_ALWAYS_EAGER=True,  # the job runs here, as Celery's eager mode runs it
            RESEARCH_WAIT_SECONDS=600,
        ),
    ):
        model.backend.cache_clear()
        try:
            yield
        finally:
            model.backend.cache_clear()


def measure_research() -> dict[str, Any]:
    """The questions asked twice over one memory; the rows of report_research."""
    import tempfile

    from retrieval import _caller, remember

    from memory.models import Research, Run
    from memory.shape.tools import promote_to_list

    caller = _caller("research")
    promote_to_list(architect=caller.architect, kind="друзья", items=FRIENDS, basis="мои друзья")
    for text in TOLD:
        remember(caller, text)
    rows = []
    with _fake_model(Path(tempfile.mkdtemp(prefix="memory-bench-claude-"))):
        for question, _, _ in RESEARCH_CASES:
            first, first_s = _ask_with(caller, question, "extreme", wait=True)
            research = Research.objects.filter(pk=first["run"]).first()
            if research is None:  # levels 1–4 answered: no research, nothing to compare
                print(f"  {question}: answered at level {first['depth_used']} before research")
                continue
            run = Run.objects.get(pk=first["run"])
            usage = research.progress.get("usage", [])
            second, second_s = _ask_with(caller, question, "standard")
            second_run = Run.objects.get(pk=second["run"])
            rows.append(
                {
                    "question": question,
                    "first": {
                        "level": first["depth_used"],
                        "found": bool(first["answer"]["found"]),
                        "turns": run.model_turns + research.progress.get("model_turns", 0),
                        "tokens": run.tokens_in
                        + run.tokens_out
                        + sum(u["tokens_in"] + u["tokens_out"] for u in usage),
                        "seconds": first_s,
                    },
                    "kept": "summary" in first.get("relearned", {}),
                    "second": {
                        "level": second["depth_used"],
                        "found": bool(second["answer"]["found"]),
                        "turns": second_run.model_turns,
                        "tokens": second_run.tokens_in + second_run.tokens_out,
                        "seconds": second_s,
                    },
                }
            )
    return {"rows": rows}


def _ask_with(caller: Any, question: str, depth: str, **params: Any) -> tuple[dict, float]:
    from memory.services.recall import recall as recall_service

    started = time.perf_counter()
    answer = recall_service(
        caller=caller, data={"text": question, "depth": depth, "lang": "ru", **params}
    )
    return answer, time.perf_counter() - started


def report_research(figures: dict[str, Any]) -> None:
    rows = figures["rows"]
    print(
        "question                                        first: level found turns   s | "
        "second: level found turns   s"
    )
    for r in rows:
        f, s = r["first"], r["second"]
        print(
            f"{r['question'][:46]:<47} {f['level']:>6} {f['found']!s:>5} {f['turns']:>5} "
            f"{f['seconds']:>5.2f} | {s['level']:>13} {s['found']!s:>5} {s['turns']:>5} "
            f"{s['seconds']:>5.2f}"
        )
    kept = [r for r in rows if r["kept"]]
    print(
        f"kept by the relearning cycle: {len(kept)} of {len(rows)}; second ask at level <= 3: "
        f"{sum(r['second']['found'] and r['second']['level'] <= 3 for r in kept)}"
    )
    if kept:
        print_costs(kept)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=None, help="paraphrase questions asked")
    parser.add_argument("--research", action="store_true", help="level 5 with the fake model")
    parser.add_argument(
        "--level3", action="store_true", help="only level 3's answers, relearned from 3 and from 4"
    )
    args = parser.parse_args(argv)
    setup_django("relearning")
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from django.conf import settings

    print(f"relearning: {settings.RELEARNING}")
    if args.research:
        figures = measure_research()
        report_research(figures)
        return figures
    figures: dict[str, Any] = {}
    if not args.level3:
        for path in (RUSSIAN, ENGLISH):
            figures[path.stem] = measure(args.cases, path)
            report(figures[path.stem])
    figures["level3"] = [measure_level3(level) for level in (4, 3)]
    report_level3(figures["level3"])
    return figures


if __name__ == "__main__":
    main()
