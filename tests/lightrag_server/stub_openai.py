"""A tiny OpenAI-compatible server for a real lightrag-server to talk to in tests.

Stdlib only. Serves:
  POST /v1/chat/completions  a fixed short assistant message (JSON, or SSE when "stream": true)
  POST /v1/embeddings        deterministic L2-normalised vectors (default 384-d), as float
                             lists or, when "encoding_format": "base64" (what the openai client
                             asks for by default), base64 of little-endian float32
  GET  /v1/models            the two model names

Every request is appended to the log file as one JSON line {"path", "model", "n_inputs"}
(n_inputs: texts embedded, or messages sent to the chat model, else 0), flushed at once so a
test can count LLM and embedding calls while the server runs.

Embeddings are feature-hashed words: each lower-cased word adds +-1 to the dimension its
sha256 picks, then the sum is L2-normalised. Equal texts give equal vectors, and texts that
share words have a positive cosine, so lightrag's vector search (cosine threshold 0.2) finds
an entity when the query keywords name it. A text without words falls back to a vector drawn
from the sha256 of the whole text.

Usage: python tests/lightrag_server/stub_openai.py --port P --log FILE [--dim 384]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import re
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_REPLY = "stub reply"
CHAT_MODEL = "stub-llm"
EMBED_MODEL = "stub-embed"
DEFAULT_DIM = 384
WORD = re.compile(r"\w+", re.UNICODE)


def embed(text: str, dim: int) -> list[float]:
    vec = [0.0] * dim
    words = WORD.findall(text.lower())
    if words:
        for word in words:
            digest = hashlib.sha256(word.encode("utf-8")).digest()
            index = int.from_bytes(digest[:8], "big") % dim
            vec[index] += 1.0 if digest[8] & 1 else -1.0
    if not any(vec):
        stream = b""
        counter = 0
        while len(stream) < dim:
            stream += hashlib.sha256(f"{counter}:{text}".encode()).digest()
            counter += 1
        vec = [(b - 127.5) / 127.5 for b in stream[:dim]]
    norm = math.sqrt(sum(x * x for x in vec)) or 1.0
    return [x / norm for x in vec]


class StubState:
    def __init__(self, log_path: str, dim: int) -> None:
        self.log_path = log_path
        self.dim = dim
        self.lock = threading.Lock()

    def log(self, path: str, model: str | None, n_inputs: int) -> None:
        line = json.dumps({"path": path, "model": model, "n_inputs": n_inputs})
        with self.lock, open(self.log_path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()


class Handler(BaseHTTPRequestHandler):
    server_version = "stub-openai/1"
    protocol_version = "HTTP/1.1"
    state: StubState  # set on the class by make_server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return {}
        return body if isinstance(body, dict) else {}

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        path = self.path.split("?", 1)[0]
        self.state.log(path, None, 0)
        if path.rstrip("/") in ("/v1/models", "/models"):
            created = int(time.time())
            models = [
                {"id": name, "object": "model", "created": created, "owned_by": "stub"}
                for name in (CHAT_MODEL, EMBED_MODEL)
            ]
            self._send_json(200, {"object": "list", "data": models})
        else:
            self._send_json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        path = self.path.split("?", 1)[0]
        body = self._body()
        if path.endswith("/chat/completions"):
            messages = body.get("messages") or []
            self.state.log(path, body.get("model"), len(messages))
            self._chat(body)
        elif path.endswith("/embeddings"):
            inputs = body.get("input")
            texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
            self.state.log(path, body.get("model"), len(texts))
            self._embeddings(body, texts)
        else:
            self.state.log(path, body.get("model"), 0)
            self._send_json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})

    def _chat(self, body: dict[str, Any]) -> None:
        model = body.get("model") or CHAT_MODEL
        created = int(time.time())
        ident = "chatcmpl-stub-" + hashlib.sha1(json.dumps(body).encode()).hexdigest()[:12]
        usage = {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
        if not body.get("stream"):
            self._send_json(
                200,
                {
                    "id": ident,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": CHAT_REPLY},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": usage,
                },
            )
            return
        base = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model}
        chunks = [
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
            {**base, "choices": [{"index": 0, "delta": {"content": CHAT_REPLY}}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append({**base, "choices": [], "usage": usage})
        payload = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        data = payload.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _embeddings(self, body: dict[str, Any], texts: list[Any]) -> None:
        dim = int(body.get("dimensions") or self.state.dim)
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for i, text in enumerate(texts):
            vector = embed(str(text), dim)
            if as_base64:
                encoded: Any = base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode()
            else:
                encoded = vector
            data.append({"object": "embedding", "index": i, "embedding": encoded})
        tokens = sum(len(WORD.findall(str(t))) for t in texts)
        self._send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model") or EMBED_MODEL,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )


def make_server(host: str, port: int, log_path: str, dim: int = DEFAULT_DIM) -> ThreadingHTTPServer:
    handler = type("BoundHandler", (Handler,), {"state": StubState(log_path, dim)})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="OpenAI-compatible stub for lightrag-server tests")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", required=True, help="file to append one JSON line per request")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--dim", type=int, default=DEFAULT_DIM)
    args = parser.parse_args(argv)
    open(args.log, "a").close()
    server = make_server(args.host, args.port, args.log, args.dim)
    print(f"stub-openai listening on http://{args.host}:{server.server_port}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
