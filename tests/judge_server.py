"""A small chat-completions server on 127.0.0.1 for the judge's tests (and the fault
pass, benchmarks/judge_faults.py).

It speaks POST /v1/chat/completions as an OpenAI-compatible endpoint does and answers
as the test says: `answer(messages)` gives each reply's text, and `faults` (a list
consumed one per request) makes it misbehave: a 429 with Retry-After, a 500, a slow
answer, a dropped connection, a non-JSON body, a reply without choices; the key (or
the password of the URL) echoed in an error's body, its reason phrase or a reply's
text; an endless body, a body or a status line sent a byte at a time, a Content-Length
of a terabyte, a gzip bomb; JSON nested 100,000 deep or holding a 5,000-digit number;
an answer cut off at max_tokens; a 400 "exceeds the context window". GET /v1/models
lists `served_model` when one is set (else 404), and the replies then name it unless
`echo_model`, as llama.cpp's server echoes whatever name it was sent. It counts the
requests and keeps each one's headers and body; `hold` keeps every answer back until
the test lets it go.
"""

from __future__ import annotations

import base64
import functools
import json
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Messages = list[dict[str, str]]

DEEP = b"[" * 100_000 + b"]" * 100_000
BIG_NUMBER = b"9" * 5_000
CONTEXT_ERROR = {
    "error": {
        "message": "Requested tokens (3021) exceed context window of 2048",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}


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
    hold: threading.Event | None = None  # when given, every answer waits for it (30 s at most)
    trickle_s: float = 1.0  # between the bytes of a trickled reply
    bomb_mb: int = 64  # what a gzip bomb inflates to
    served_model: str | None = None  # listed by GET /v1/models, named in replies
    echo_model: bool = False  # replies name the model they were sent, whatever it is
    served_model_listed: bool = True  # False: GET /v1/models is a 404 all the same
    in_flight: int = 0
    most_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: threading.Event = field(default_factory=threading.Event)
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


def _credential(headers: Any) -> str:
    """What the client authenticated with: the bearer key, or the Basic password."""
    value = str(headers.get("Authorization", ""))
    if value.startswith("Bearer "):
        return value[len("Bearer ") :]
    if value.startswith("Basic "):
        with suppress(ValueError):
            return base64.b64decode(value[len("Basic ") :]).decode().partition(":")[2]
    return ""


@functools.cache
def bomb(megabytes: int) -> bytes:
    """gzip of `megabytes` MB of zeros (a thousandth of it in size)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    return b"".join(packer.compress(block) for _ in range(megabytes)) + packer.flush()


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(
            self,
            status: int,
            body: bytes,
            headers: dict[str, str] | None = None,
            reason: str | None = None,
        ) -> None:
            self.send_response(status, reason)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if (
                self.path == "/v1/models"
                and server.served_model is not None
                and server.served_model_listed
            ):
                listing = {"object": "list", "data": [{"id": server.served_model}]}
                self._send(200, json.dumps(listing).encode())
                return
            self._send(404, json.dumps({"error": {"message": "no such path"}}).encode())

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
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up: fine
            finally:
                with server.lock:
                    server.in_flight -= 1

        def _answer(self, body: dict[str, Any]) -> None:
            if server.hold is not None:
                server.hold.wait(30)
            if server.delay_s:
                time.sleep(server.delay_s)
            fault = server._next_fault()
            if fault is not None and self._misbehave(fault):
                return
            if fault == "slow":
                time.sleep(server.slow_s)
            text = server.answer(body["messages"])
            if fault == "echo-key-answer":
                text = f"{text} (key {_credential(self.headers)})"
            named = body.get("model")
            if server.served_model is not None and not server.echo_model:
                named = server.served_model
            reply = {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "model": named,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "length" if fault == "length" else "stop",
                    }
                ],
            }
            self._send(200, json.dumps(reply).encode())

        def _misbehave(self, fault: str) -> bool:
            """Send the faulty reply `fault` names; False for a fault that only alters
            a good reply (slow, length, echo-key-answer) or none."""
            key = _credential(self.headers)
            echoed = f"Incorrect API key provided: {key}. Find your key in your account."
            if fault == "429":
                error = {"error": {"message": "rate limited"}}
                self._send(429, json.dumps(error).encode(), {"Retry-After": "7"})
            elif fault == "500":
                self._send(500, b'{"error": "boom"}')
            elif fault == "401":
                self._send(401, json.dumps({"error": {"message": "bad key \x1b[2J"}}).encode())
            elif fault == "drop":
                self.close_connection = True
                self.connection.close()
            elif fault == "html":
                self._send(200, b"<html>\x1b]2;pwned\x07 not json</html>")
            elif fault == "nochoices":
                self._send(200, json.dumps({"object": "chat.completion"}).encode())
            elif fault in ("echo-key-400", "echo-key-401", "echo-key-500"):
                status = int(fault.rsplit("-", 1)[1])
                error = {"error": {"message": echoed, "code": "invalid_api_key"}}
                self._send(status, json.dumps(error).encode(), {"Retry-After": "0"})
            elif fault == "echo-key-reason":
                self._send(401, b"{}", reason=f"Unauthorized key {key}")
            elif fault == "echo-key-partial":
                hint = f"{key[:6]}...{key[-4:]}" if len(key) > 10 else key
                error = {"error": {"message": f"Incorrect API key provided: {hint}."}}
                self._send(401, json.dumps(error).encode())
            elif fault == "echo-key-200":
                self._send(200, json.dumps({"error": {"message": echoed}}).encode())
            elif fault == "context":
                self._send(400, json.dumps(CONTEXT_ERROR).encode())
            elif fault in ("deep-200", "deep-401", "deep-500"):
                self._send(int(fault[-3:]), DEEP, {"Retry-After": "0"})
            elif fault in ("bignum-200", "bignum-401", "bignum-500"):
                body = b'{"error": {"message": "x"}, "n": ' + BIG_NUMBER + b"}"
                self._send(int(fault[-3:]), body, {"Retry-After": "0"})
            elif fault == "gzip-bomb":
                self._send(200, bomb(server.bomb_mb), {"Content-Encoding": "gzip"})
            elif fault in ("endless", "endless-close"):
                self._endless(chunked=fault == "endless")
            elif fault == "trickle":
                self._trickle_body()
            elif fault == "trickle-status":
                self._trickle(b"HTTP/1.1 200 OK\r\n" * 10_000)
            elif fault == "huge-length":
                self.send_response(200)
                self.send_header("Content-Length", str(10**12))
                self.end_headers()
                self._trickle(b"{" * 1000)
            else:
                return False
            return True

        def _endless(self, chunked: bool) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            block = b'{"choices": [' + b" " * (1 << 16)
            frame = b"%x\r\n%s\r\n" % (len(block), block) if chunked else block
            while not server.closing.is_set():
                self.wfile.write(frame)

        def _trickle_body(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000000")
            self.end_headers()
            self._trickle(b" " * 1_000_000)

        def _trickle(self, data: bytes) -> None:
            self.close_connection = True
            for index in range(len(data)):
                if server.closing.wait(server.trickle_s):
                    return
                self.wfile.write(data[index : index + 1])
                self.wfile.flush()

    return Handler


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up on a reply is no news


@contextmanager
def serving(server: Server | None = None) -> Iterator[Server]:
    """Run `server` (a new one by default) on a free port until the block ends."""
    server = server or Server()
    httpd = _Quiet(("127.0.0.1", 0), _handler(server))
    server.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.closing.set()
        httpd.shutdown()
        httpd.server_close()
