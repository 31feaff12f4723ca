"""A small chat-completions server on 127.0.0.1 for the judge's tests.

It speaks POST /v1/chat/completions as an OpenAI-compatible endpoint does and answers
as the test says: `answer(messages)` gives each reply's text, and `faults` (a list
consumed one per request) injects a 429 with Retry-After, a 500, a slow answer, a
dropped connection, a non-JSON body or a reply without choices. It counts the requests
and keeps each one's headers and body.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Messages = list[dict[str, str]]


def effort_by_keyword(messages: Messages) -> str:
    """HIGH for a question that says "logs", LOW for one with " or ", else MEDIUM."""
    question = messages[-1]["content"].split("Question the agent asked:\n", 1)[-1]
    question = question.split("\n\n", 1)[0].lower()
    if "log" in question:
        return "HIGH"
    if " or " in question:
        return "low."
    return "**Medium**"


@dataclass
class Server:
    answer: Callable[[Messages], str] = effort_by_keyword
    faults: list[str] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    slow_s: float = 2.0
    delay_s: float = 0.0  # before every answer
    in_flight: int = 0
    most_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def count(self) -> int:
        with self.lock:
            return len(self.requests)

    def _next_fault(self) -> str | None:
        with self.lock:
            return self.faults.pop(0) if self.faults else None


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            with server.lock:
                server.requests.append(body)
                server.headers.append(dict(self.headers))
            if self.path != "/v1/chat/completions":
                self._send(404, json.dumps({"error": {"message": "no such path"}}).encode())
                return
            with server.lock:
                server.in_flight += 1
                server.most_in_flight = max(server.most_in_flight, server.in_flight)
            try:
                self._answer(body)
            finally:
                with server.lock:
                    server.in_flight -= 1

        def _answer(self, body: dict[str, Any]) -> None:
            if server.delay_s:
                time.sleep(server.delay_s)
            fault = server._next_fault()
            if fault == "429":
                error = {"error": {"message": "rate limited"}}
                self._send(429, json.dumps(error).encode(), {"Retry-After": "7"})
                return
            if fault == "500":
                self._send(500, b'{"error": "boom"}')
                return
            if fault == "401":
                self._send(401, json.dumps({"error": {"message": "bad key \x1b[2J"}}).encode())
                return
            if fault == "drop":
                self.close_connection = True
                self.connection.close()
                return
            if fault == "slow":
                time.sleep(server.slow_s)
            if fault == "html":
                self._send(200, b"<html>\x1b]2;pwned\x07 not json</html>")
                return
            if fault == "nochoices":
                self._send(200, json.dumps({"object": "chat.completion"}).encode())
                return
            text = server.answer(body["messages"])
            reply = {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
            }
            self._send(200, json.dumps(reply).encode())

    return Handler


@contextmanager
def serving(server: Server | None = None) -> Iterator[Server]:
    """Run `server` (a new one by default) on a free port until the block ends."""
    server = server or Server()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    httpd.daemon_threads = True
    server.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
