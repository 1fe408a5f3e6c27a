"""A tiny OpenAI-compatible embeddings server (stdlib http.server in a thread) for driving the real client.

Vectors are deterministic bags of hashed words, L2-normalised: texts sharing words are close, so hybrid
search has something meaningful to rank, and every request is recorded for assertions.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

DIMS = 64


def bag_of_words_vector(text: str) -> list[float]:
    vec = [0.0] * DIMS
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vec[int(hashlib.md5(word.encode()).hexdigest(), 16) % DIMS] += 1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


class EmbeddingsStub:
    def __init__(self) -> None:
        self.inputs: list[str] = []
        self.requests = 0
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path != "/v1/embeddings":
                    self.send_error(404)
                    return
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                with stub.lock:
                    stub.requests += 1
                    stub.inputs.extend(texts)
                data = [
                    {"object": "embedding", "index": i, "embedding": bag_of_words_vector(t)}
                    for i, t in enumerate(texts)
                ]
                payload = json.dumps(
                    {
                        "object": "list",
                        "data": data,
                        "model": body["model"],
                        "usage": {"prompt_tokens": 1, "total_tokens": 1},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def embeddings_stub() -> Iterator[EmbeddingsStub]:
    stub = EmbeddingsStub()
    yield stub
    stub.close()
