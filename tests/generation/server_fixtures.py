"""Inference servers for the server engine's tests, all on loopback.

- `StubServer`: a stdlib HTTP server in a thread that answers each request with what its
  test scripts (a status, a JSON body or raw bytes, a delay) and records what it got;
  for the failure paths (errors, slowness, malformed replies, missing choices).
- `TransformersServer`: a real OpenAI-compatible server, `transformers serve`, in a
  subprocess on CPU, serving a local model directory with no hub access.
"""

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import bench.inference_server

free_port = bench.inference_server.free_port


@dataclass
class Reply:
    status: int = 200
    body: object = None  # JSON-encoded, unless bytes (sent as they are)
    delay: float = 0.0  # seconds before answering
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict | None


def completion(*texts: str) -> dict:
    """A completions reply with one choice per text."""
    return {
        "object": "text_completion",
        "choices": [
            {"index": i, "text": text, "finish_reason": "stop"} for i, text in enumerate(texts)
        ],
    }


def chat_completion(*texts: str) -> dict:
    """A chat-completions reply with one choice per text."""
    return {
        "object": "chat.completion",
        "choices": [
            {"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            for i, text in enumerate(texts)
        ],
    }


def error(message: str) -> dict:
    """An OpenAI-style error body."""
    return {"error": {"message": message, "type": "invalid_request_error"}}


class StubServer:
    """A scripted OpenAI-compatible server: `respond(received)` gives each request's Reply.

    Use as a context manager; `url` is its base (`http://127.0.0.1:PORT/v1`), `received`
    every request in arrival order, `most_in_flight` the most requests it held at once.
    """

    def __init__(self, respond: Callable[[Received], Reply]) -> None:
        self.respond = respond
        self.received: list[Received] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        # A short poll interval: shutdown() waits for one, once per test.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> "StubServer":
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def posted(self) -> list[dict]:
        """The JSON bodies of the POST requests, in arrival order."""
        return [request.body for request in self.received if request.method == "POST"]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self._answer()

            def do_POST(self) -> None:
                self._answer()

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                received = Received(
                    method=self.command,
                    path=self.path,
                    headers={name.lower(): value for name, value in self.headers.items()},
                    body=json.loads(raw) if raw else None,
                )
                with stub._lock:
                    stub.received.append(received)
                    stub.in_flight += 1
                    stub.most_in_flight = max(stub.most_in_flight, stub.in_flight)
                try:
                    reply = stub.respond(received)
                    time.sleep(reply.delay)
                    payload = (
                        reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body)
                    )
                    data = payload if isinstance(payload, bytes) else payload.encode()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)
                finally:
                    with stub._lock:
                        stub.in_flight -= 1

            def log_message(self, format, *args) -> None:
                pass  # quiet: the tests read `received` instead

        return Handler


class TransformersServer(bench.inference_server.TransformersServer):
    """The benchmark's `transformers serve` launcher, failing the test (with the server's
    log) when it does not start."""

    def wait_ready(self, seconds: float = bench.inference_server.SERVER_START_SECONDS) -> None:
        try:
            super().wait_ready(seconds)
        except bench.inference_server.ServerDidNotStart as error:
            pytest.fail(str(error))
