"""What the benches share: a Django set up on a throwaway data folder, and small formatting."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"  # read there, never copied
if str(ROOT) not in sys.path:  # the project's packages, for a bench run as a script
    sys.path.insert(0, str(ROOT))


def locomo_questions() -> list[str]:
    """Every LoCoMo question, in the file's order."""
    samples = json.loads(LOCOMO.read_text())
    return [qa["question"] for sample in samples for qa in sample.get("qa", [])]


class Turn(NamedTuple):
    dia: str
    text: str
    said_at: str  # RFC 3339: the session's time, a second a turn, so the order holds
    session: int


def locomo_turns(sample: dict[str, Any], captions: bool) -> list[Turn]:
    """Every turn of one LoCoMo conversation as the memory is told it: "<speaker>: <text>",
    with the shared photo's caption when ``captions`` (" [shares a photo: …]"), said when its
    session was, a second a turn."""
    conversation = sample["conversation"]
    out = []
    index = 1
    while f"session_{index}" in conversation:
        started = datetime.strptime(
            conversation[f"session_{index}_date_time"], "%I:%M %p on %d %B, %Y"
        ).replace(tzinfo=UTC)
        for second, turn in enumerate(conversation[f"session_{index}"]):
            text = f"{turn['speaker']}: {turn.get('text', '')}"
            if captions and turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            said = (started + timedelta(seconds=second)).isoformat().replace("+00:00", "Z")
            out.append(Turn(turn["dia_id"], text, said, index))
        index += 1
    return out


def post_verb(
    base: str, key: str, verb: str, body: dict[str, Any], timeout: float = 120
) -> tuple[int, float, dict[str, Any]]:
    """One verb over the REST API as a caller sends it: (HTTP status, milliseconds, answer)."""
    request = urllib.request.Request(
        f"{base}/api/v1/{verb}",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            code, answer = response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        code, answer = error.code, {}
    return code, (time.perf_counter() - started) * 1000, answer


def returned_notes(answer: dict[str, Any]) -> list[str]:
    """The note ids an answer hands back, in its order: notes, hits, graph sources, candidates
    (the same whether the answer came in process or as the REST API's JSON)."""
    from memory.stores.graph_types import note_of_chunk  # memory only for a bench that reads

    data = (answer.get("answer") or {}).get("data") or {}
    out: list[str] = []
    for item in data.get("notes", []) + data.get("hits", []):
        if item.get("note"):
            out.append(str(item["note"]))
    out += [n for n in (note_of_chunk(c.get("source")) for c in data.get("chunks", [])) if n]
    out += [str(item["note"]) for item in data.get("candidates", []) if item.get("note")]
    return list(dict.fromkeys(out))


def setup_django(prefix: str) -> None:
    """Django on a fresh data folder, one OpenMP thread (the embedder's measured setting)."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "memory.settings"
    os.environ["MEMORY_DATA_DIR"] = tempfile.mkdtemp(prefix=f"memory-bench-{prefix}-")
    os.environ["OMP_NUM_THREADS"] = "1"
    # Retrieval benches ask right after telling: the stores are filled in the request. The
    # capture-first path (answer first, stores behind) is measured by its own bench.
    os.environ.setdefault("STORES_FILL", "inline")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def has_cyrillic(text: str) -> bool:
    return any("\u0400" <= ch <= "\u04ff" for ch in text)


def pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile (0–100) of the values, nearest rank; NaN for none."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def timed(fn, n: int, warmup: int = 3) -> list[float]:  # type: ignore[no-untyped-def]
    """Milliseconds of ``n`` calls of ``fn`` after ``warmup`` unmeasured ones."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        out.append((time.perf_counter() - started) * 1000)
    return out
