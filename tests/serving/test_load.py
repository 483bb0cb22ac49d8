"""The memory under concurrent clients, through real HTTP against `manage.py memory_run` on a free
localhost port: 50 clients for 30 s see no reset and no 5xx; eight concurrent remembers of a text
at the published limit (64 KB on the wire) are all answered, none 500, within a stated bound, and
another tenant's short remembers meanwhile are not held behind them."""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.serving.process import Served, http_client, memory_run

pytestmark = pytest.mark.slow

CLIENTS = 50
DURATION = 30.0  # seconds clients keep sending
PER_CLIENT_MAX = 200  # requests, so a fast machine does not grow the test without end
REQUEST_TIMEOUT = 120.0

BIG_REMEMBERS = 8
BIG_BODY = 64 * 1024
# Measured on the 2-core test machine (load average ~1.5), the eight sharing one web process:
# the slowest answered in 28 s on SQLite and 30 s on PostgreSQL (each one embeds its first 512
# tokens and writes the graph inside the request). The bound doubles that; a lock convoy or a
# hang goes far past it (while the embedder still slid windows over the whole note, 11 s for
# 20,000 characters under one lock, the slowest took 126 s and some not even 120 s).
BIG_WITHIN = 60.0
# Meanwhile another tenant's short remember must not wait behind them: alone it takes ~0.5 s,
# beside the eight at most 13 s (SQLite) and 14 s (PostgreSQL) were measured.
SHORT_WITHIN = 30.0


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with memory_run(tmp_path_factory.mktemp("serving")) as server:
        yield server


@dataclass
class Outcome:
    verb: str
    status: int | None  # None: no answer (reset, refused, timed out)
    seconds: float
    error: str = ""


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _report(title: str, outcomes: list[Outcome], capsys: pytest.CaptureFixture[str]) -> None:
    lines = [f"{title}: {len(outcomes)} requests"]
    for verb in sorted({o.verb for o in outcomes}):
        times = [o.seconds for o in outcomes if o.verb == verb and o.status is not None]
        if times:
            lines.append(
                f"  {verb}: n={len(times)} p50={statistics.median(times):.2f}s "
                f"p95={_percentile(times, 0.95):.2f}s max={max(times):.2f}s"
            )
    lines.append(f"  statuses: {dict(Counter(o.status for o in outcomes))}")
    with capsys.disabled():
        print("\n" + "\n".join(lines))


def _client(
    served: Served, key: str, number: int, deadline: float, every: int = 3
) -> list[Outcome]:
    """One client: a remember every ``every``-th request, recalls between."""
    outcomes: list[Outcome] = []
    headers = {"Authorization": f"Bearer {key}"}
    with http_client(base_url=served.url, headers=headers, timeout=REQUEST_TIMEOUT) as client:
        for n in range(PER_CLIENT_MAX):
            if time.monotonic() >= deadline:
                break
            if n % every == 0:
                verb, text = (
                    "remember",
                    f"Клиент {number}, заметка {n}: мой друг Дима живёт в Казани",
                )
            else:
                verb, text = "recall", "Где живёт мой друг Дима?"
            started = time.perf_counter()
            try:
                answer = client.post(f"/api/v1/{verb}", json={"text": text})
                outcomes.append(Outcome(verb, answer.status_code, time.perf_counter() - started))
            except httpx.TransportError as error:
                outcomes.append(
                    Outcome(
                        verb,
                        None,
                        time.perf_counter() - started,
                        f"{type(error).__name__}: {error}",
                    )
                )
    return outcomes


def test_fifty_clients_for_thirty_seconds_see_no_reset_and_no_5xx(
    served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    key = served.key("load")
    deadline = time.monotonic() + DURATION
    with ThreadPoolExecutor(CLIENTS) as pool:
        runs = [pool.submit(_client, served, key, number, deadline) for number in range(CLIENTS)]
        outcomes = [o for run in runs for o in run.result(timeout=DURATION + 2 * REQUEST_TIMEOUT)]
    _report(f"{CLIENTS} clients for {DURATION:.0f} s", outcomes, capsys)
    failed = [o for o in outcomes if o.status is None]
    assert failed == [], Counter(o.error for o in failed).most_common(5)
    server_errors = [o for o in outcomes if o.status >= 500]
    assert server_errors == [], served.tail()
    assert Counter(o.status for o in outcomes) == {200: len(outcomes)}
    # Every client was answered at least once, remembers and recalls alike.
    assert len(outcomes) >= CLIENTS
    assert {o.verb for o in outcomes} == {"remember", "recall"}


LOAD_CLIENTS = 20
LOAD_SECONDS = 60.0


@pytest.mark.postgres_only
def test_twenty_clients_for_a_minute_one_remember_to_four_recalls_on_postgresql(
    served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    """The production server (gunicorn, worker and beat by memory_run) on PostgreSQL, capture
    first: throughput and p95 per verb are printed (figures, not bounds), errors must be 0."""
    key = served.key("load-pg")
    started = time.monotonic()
    deadline = started + LOAD_SECONDS
    with ThreadPoolExecutor(LOAD_CLIENTS) as pool:
        runs = [
            pool.submit(_client, served, key, number, deadline, 5) for number in range(LOAD_CLIENTS)
        ]
        outcomes = [
            o for run in runs for o in run.result(timeout=LOAD_SECONDS + 2 * REQUEST_TIMEOUT)
        ]
    elapsed = time.monotonic() - started
    _report(
        f"{LOAD_CLIENTS} clients for {LOAD_SECONDS:.0f} s, 1 remember : 4 recalls, "
        f"{len(outcomes) / elapsed:.1f} requests/s",
        outcomes,
        capsys,
    )
    assert [o for o in outcomes if o.status != 200] == [], served.tail()
    remembers = sum(o.verb == "remember" for o in outcomes)
    assert 0.15 <= remembers / len(outcomes) <= 0.25  # the declared mix held


def _text_for_a_64_kb_body(limit: int, number: int) -> str:
    """A text of exactly `limit` characters, Russian and English sentences mixed so that the
    JSON body, as json.dumps writes it (non-ASCII escaped), is about 64 KB."""
    russian = "Архитектор обсуждал с Димой перенос сервиса памяти в Казань. "
    english = "The architect discussed moving the memory service to Kazan with Dima. "
    parts = [f"Запись {number}. "]
    while sum(map(len, parts)) < limit:
        size = len(json.dumps("".join(parts)))
        parts.append(russian if size / sum(map(len, parts)) < BIG_BODY / limit else english)
    return "".join(parts)[:limit]


def _remember(client: httpx.Client, label: str, key: str, body: str) -> Outcome:
    started = time.perf_counter()
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    try:
        answer = client.post("/api/v1/remember", content=body, headers=headers)
        return Outcome(label, answer.status_code, time.perf_counter() - started)
    except httpx.TransportError as error:
        seconds = time.perf_counter() - started
        return Outcome(label, None, seconds, f"{type(error).__name__}: {error}")


def test_eight_concurrent_remembers_of_64_kb_are_all_answered_in_time(
    served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = httpx.get(f"{served.url}/api/schema/?format=json", timeout=30).json()
    limit = schema["components"]["schemas"]["RememberRequest"]["properties"]["text"]["maxLength"]
    big, small = served.key("big"), served.key("small")
    bodies = [json.dumps({"text": _text_for_a_64_kb_body(limit, n)}) for n in range(BIG_REMEMBERS)]
    assert all(abs(len(body) - BIG_BODY) < 1024 for body in bodies), [len(b) for b in bodies]
    barrier = threading.Barrier(BIG_REMEMBERS + 1)
    done = threading.Event()
    # Answers past the bound are still waited for a while, so the report shows how long they took.
    timeout = BIG_WITHIN + 60

    def remember_big(body: str) -> Outcome:
        with http_client(base_url=served.url, timeout=timeout) as client:
            barrier.wait(timeout=30)
            return _remember(client, "remember 64 KB", big, body)

    def remember_short() -> list[Outcome]:
        outcomes: list[Outcome] = []
        with http_client(base_url=served.url, timeout=timeout) as client:
            barrier.wait(timeout=30)
            while not done.is_set():
                body = json.dumps({"text": f"Короткая заметка {len(outcomes)} другого архитектора"})
                outcomes.append(_remember(client, "short remember beside", small, body))
                done.wait(1)
        return outcomes

    with ThreadPoolExecutor(BIG_REMEMBERS + 1) as pool:
        beside = pool.submit(remember_short)
        try:
            outcomes = list(pool.map(remember_big, bodies, timeout=timeout + 60))
        finally:
            done.set()
        shorts = beside.result(timeout=timeout + 60)
    _report(
        f"{BIG_REMEMBERS} concurrent remembers of {BIG_BODY // 1024} KB", outcomes + shorts, capsys
    )
    assert [o.status for o in outcomes] == [200] * BIG_REMEMBERS, served.tail()
    slowest = max(o.seconds for o in outcomes)
    assert slowest <= BIG_WITHIN, f"the slowest took {slowest:.1f} s (bound {BIG_WITHIN:.0f} s)"
    assert {o.status for o in shorts} == {200}, served.tail()
    slowest = max(o.seconds for o in shorts)
    assert slowest <= SHORT_WITHIN, (
        f"another tenant's short remember waited {slowest:.1f} s behind them "
        f"(bound {SHORT_WITHIN:.0f} s)"
    )
