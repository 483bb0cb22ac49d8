"""Run a real lightrag-server (from .venv-lightrag, see `make lightrag-server`) against the
OpenAI-compatible stub in stub_openai.py, so tests can count the LLM calls it makes.

    server = LightRagServer(tmp_path)   # starts the stub, then the server; waits for /health
    httpx.post(f"{server.url}/query/data", headers=server.headers, json=...)
    server.llm_calls(), server.embedding_calls()
    server.stop(); server.start()       # restart on the same port and data
    server.close()

The server runs in its own temp cwd (it reads ./.env from there) with a clean environment:
only the variables built in server_env() below, nothing inherited from the caller.
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
LIGHTRAG_VENV = REPO / ".venv-lightrag"
LIGHTRAG_BIN = LIGHTRAG_VENV / "bin" / "lightrag-server"
TIKTOKEN_CACHE = LIGHTRAG_VENV / "tiktoken-cache"
STUB = Path(__file__).with_name("stub_openai.py")

EMBEDDING_DIM = 384
CHAT_PATH = "/v1/chat/completions"
EMBEDDINGS_PATH = "/v1/embeddings"


class LightRagServerError(RuntimeError):
    pass


def installed() -> bool:
    """The server and its offline tokenizer are both in place (`make lightrag-server`)."""
    has_bin = LIGHTRAG_BIN.is_file() and os.access(LIGHTRAG_BIN, os.X_OK)
    return has_bin and TIKTOKEN_CACHE.is_dir() and any(TIKTOKEN_CACHE.iterdir())


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return "(no output)"
    return "\n".join(text.splitlines()[-lines:])


class LightRagServer:
    """One lightrag-server process plus its stub; data lives under `root`."""

    def __init__(
        self,
        root: Path,
        *,
        api_key: str = "test-lightrag-key",
        workspace: str = "",
        startup_timeout: float = 60.0,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.root = Path(root)
        self.api_key = api_key
        self.workspace = workspace
        self.startup_timeout = startup_timeout
        self.extra_env = dict(extra_env or {})
        self.cwd = self.root / "cwd"
        self.working_dir = self.cwd / "rag_storage"
        self.input_dir = self.cwd / "inputs"
        self.home = self.root / "home"
        self.stub_log = self.root / "stub-requests.jsonl"
        self.server_out = self.root / "server.out"
        self.server_err = self.root / "server.err"
        for folder in (self.cwd, self.working_dir, self.input_dir, self.home):
            folder.mkdir(parents=True, exist_ok=True)
        self.stub_log.touch()
        self.port = free_port()
        self.stub_port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.stub_url = f"http://127.0.0.1:{self.stub_port}/v1"
        self._stub: subprocess.Popen[bytes] | None = None
        self._server: subprocess.Popen[bytes] | None = None
        self.last_start_seconds: float | None = None
        atexit.register(self.close)  # never leave processes behind, even on a crash
        try:
            self._start_stub()
            self.start()
        except BaseException:
            self.close()
            raise

    # -- what tests use -------------------------------------------------------------------

    @property
    def headers(self) -> dict[str, str]:
        return {"X-API-Key": self.api_key}

    def client(self, timeout: float = 30.0) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers=self.headers, timeout=timeout, trust_env=False
        )

    def requests(self) -> list[dict]:
        """Every request the stub saw so far, oldest first (complete lines only)."""
        complete = self.stub_log.read_text(encoding="utf-8").split("\n")[:-1]
        return [json.loads(line) for line in complete if line.strip()]

    def calls_by_path(self) -> Counter[str]:
        return Counter(entry["path"] for entry in self.requests())

    def llm_calls(self) -> int:
        return self.calls_by_path()[CHAT_PATH]

    def embedding_calls(self) -> int:
        return self.calls_by_path()[EMBEDDINGS_PATH]

    @property
    def running(self) -> bool:
        return self._server is not None and self._server.poll() is None

    # -- process control ------------------------------------------------------------------

    def server_env(self) -> dict[str, str]:
        env = {
            "PATH": f"{LIGHTRAG_VENV / 'bin'}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
            "TIKTOKEN_CACHE_DIR": str(TIKTOKEN_CACHE),
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "LIGHTRAG_API_KEY": self.api_key,
            "TOKEN_SECRET": "lightrag-test-token-secret",
            "WORKING_DIR": str(self.working_dir),
            "INPUT_DIR": str(self.input_dir),
            "WORKSPACE": self.workspace,
            "LOG_DIR": str(self.root),
            "LLM_BINDING": "openai",
            "LLM_BINDING_HOST": self.stub_url,
            "LLM_BINDING_API_KEY": "stub-key",
            "LLM_MODEL": "stub-llm",
            "EMBEDDING_BINDING": "openai",
            "EMBEDDING_BINDING_HOST": self.stub_url,
            "EMBEDDING_BINDING_API_KEY": "stub-key",
            "EMBEDDING_MODEL": "stub-embed",
            "EMBEDDING_DIM": str(EMBEDDING_DIM),
            "MAX_GLEANING": "0",
            "RERANK_BINDING": "null",
        }
        env.update(self.extra_env)
        return env

    def _start_stub(self) -> None:
        err = open(self.root / "stub.err", "ab")
        self._stub = subprocess.Popen(
            [sys.executable, str(STUB), "--port", str(self.stub_port), "--log", str(self.stub_log)],
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=err,
        )
        err.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self._stub.poll() is not None:
                raise LightRagServerError(f"stub exited: {_tail(self.root / 'stub.err')}")
            try:
                with socket.create_connection(("127.0.0.1", self.stub_port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise LightRagServerError("stub did not listen within 10 s")

    def start(self) -> None:
        """Start lightrag-server (again) on the same port, working dir and data."""
        if self.running:
            return
        if not installed():
            raise LightRagServerError(
                f"{LIGHTRAG_BIN} or {TIKTOKEN_CACHE} missing: run make lightrag-server"
            )
        out = open(self.server_out, "ab")
        err = open(self.server_err, "ab")
        began = time.monotonic()
        self._server = subprocess.Popen(
            [str(LIGHTRAG_BIN)],
            cwd=self.cwd,
            env=self.server_env(),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
        out.close()
        err.close()
        self._wait_healthy(began)

    def _wait_healthy(self, began: float) -> None:
        deadline = began + self.startup_timeout
        with httpx.Client(timeout=2.0, trust_env=False) as http:
            while time.monotonic() < deadline:
                assert self._server is not None
                if self._server.poll() is not None:
                    raise LightRagServerError(
                        f"lightrag-server exited with {self._server.returncode} before healthy;"
                        f" stderr tail:\n{_tail(self.server_err)}"
                    )
                try:
                    response = http.get(f"{self.url}/health", headers=self.headers)
                    if response.status_code == 200 and response.json().get("status") == "healthy":
                        self.last_start_seconds = time.monotonic() - began
                        return
                except (httpx.HTTPError, ValueError):
                    pass
                time.sleep(0.1)
        self._terminate(self._server)
        self._server = None
        raise LightRagServerError(
            f"lightrag-server not healthy within {self.startup_timeout:.0f} s;"
            f" stderr tail:\n{_tail(self.server_err)}"
        )

    @staticmethod
    def _terminate(proc: subprocess.Popen[bytes] | None, grace: float = 15.0) -> None:
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)

    def stop(self) -> None:
        """Stop lightrag-server only; the stub, its log and the data stay."""
        self._terminate(self._server)
        self._server = None

    def close(self) -> None:
        self.stop()
        self._terminate(self._stub, grace=5.0)
        self._stub = None
        atexit.unregister(self.close)

    def __enter__(self) -> LightRagServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
