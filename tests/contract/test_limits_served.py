"""The header limits as the production server applies them (gunicorn, ``-c python:memory.serving``,
as `make run` starts it): what reaches the memory is answered by its gate in the one JSON shape;
what gunicorn itself cannot take never reaches it (PASSPORT.md §14.3 names both)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.serving.process import free_port, http_client

ROOT = Path(__file__).resolve().parent.parent.parent
READY_WITHIN = 120.0
# gunicorn's own default limits (memory/serving.py leaves them as they are).
GUNICORN_FIELD_LIMIT = 8190
GUNICORN_LINE_LIMIT = 4094


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("gunicorn") / "gunicorn.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                "python:memory.serving",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "1",
                "--threads",
                "2",
            ],
            cwd=ROOT,
            env=os.environ.copy(),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_WITHIN
        with http_client(timeout=5) as http:
            while True:
                assert process.poll() is None, log.read_text()
                try:
                    if http.get(f"{url}/api/nothing").status_code == 404:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "gunicorn did not come up:\n" + log.read_text()
                time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.mark.slow
def test_headers_over_the_memorys_limit_get_the_json_431_through_gunicorn(served, settings):
    # One header line under gunicorn's field limit, the request's headers over the memory's.
    padding = "x" * (GUNICORN_FIELD_LIMIT - 100)
    assert len(padding) > settings.MEMORY_MAX_HEADER_BYTES - 200
    response = httpx.post(
        f"{served}/api/v1/recall", json={"text": "x"}, headers={"X-Padding": padding}, timeout=30
    )
    assert response.status_code == 431
    body = response.json()
    assert body["error"]["code"] == "headers_too_large"
    assert body["error"]["limit"] == settings.MEMORY_MAX_HEADER_BYTES
    # Several small lines add up the same way.
    lines = {f"X-Pad-{i}": "y" * 1000 for i in range(10)}
    response = httpx.post(f"{served}/api/v1/recall", json={"text": "x"}, headers=lines, timeout=30)
    assert (response.status_code, response.json()["error"]["code"]) == (431, "headers_too_large")


@pytest.mark.slow
def test_what_gunicorn_cannot_take_is_its_own_html_refusal(served):
    # Over gunicorn's limit_request_field_size the request never reaches the memory: gunicorn
    # answers 431 itself, in HTML, and closes the connection. This is the one refusal under /api/
    # not in the JSON shape; PASSPORT.md §14.3 says so.
    response = httpx.post(
        f"{served}/api/v1/recall",
        json={"text": "x"},
        headers={"X-Padding": "x" * (GUNICORN_FIELD_LIMIT + 10)},
        timeout=30,
    )
    assert response.status_code == 431
    assert response.headers["content-type"].startswith("text/html")
    # So is a request line over gunicorn's limit_request_line (4094 bytes): 414, in HTML.
    response = httpx.get(f"{served}/api/v1/{'x' * (GUNICORN_LINE_LIMIT + 10)}", timeout=30)
    assert response.status_code == 414
    assert response.headers["content-type"].startswith("text/html")


@pytest.mark.slow
def test_404_and_413_through_gunicorn_are_json(served, settings):
    response = httpx.get(f"{served}/api/v1/nothing", timeout=30)
    assert (response.status_code, response.json()["error"]["code"]) == (404, "not_found")
    body = b'{"text": "' + b"x" * settings.MEMORY_MAX_BODY_BYTES + b'"}'
    response = httpx.post(
        f"{served}/api/v1/remember",
        content=body,
        headers={"Content-Type": "application/json"},
        timeout=60,
    )
    assert (response.status_code, response.json()["error"]["code"]) == (413, "too_large")
