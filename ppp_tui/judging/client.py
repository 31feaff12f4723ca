"""One request to an OpenAI-compatible endpoint: POST {base_url}/chat/completions.

httpx speaks the protocol, on an event loop of the client's own thread, so that a
request has a deadline as a whole: `timeout_s` covers connecting, sending and reading
the reply, however slowly the endpoint sends it. A reply larger than MAX_REPLY_BYTES
(as it says, or as it comes) is refused without being read further. A 429 or a 5xx
answer is tried again after a pause that honours Retry-After (capped at `MAX_WAIT_S`)
or else doubles from `BACKOFF_BASE_S`; a timeout or a broken connection is tried again
a few times. What cannot be answered (tries used up, a refusal such as 401 or 404, a
reply that is not the protocol's) raises `JudgeError`: one line naming the endpoint,
with the endpoint's own words made safe for a terminal and every secret in them hidden
(`quoted`, the one way an endpoint's words reach a message). A prompt longer than the
model's context raises `TooLong`: that one cannot be judged, the others can. A client
shared by threads stops sending once `stop` is set.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import email.utils
import json
import math
import os
import re
import threading
import time
from collections.abc import AsyncGenerator, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import httpx

from ..core.errors import PPPError
from ..core.judge import Prompt
from ..core.masking import Secrets, url_credentials
from ..core.settings import JudgeSettings
from ..safe_text import inline

# Tries of one request answered 429 or 5xx, and of one that timed out or whose
# connection failed; the pause before try n + 1 is BACKOFF_BASE_S * 2**(n - 1), or what
# Retry-After asks, never more than MAX_WAIT_S. Module constants so tests run fast.
STATUS_TRIES = 5
TRANSPORT_TRIES = 3
BACKOFF_BASE_S = 1.0
MAX_WAIT_S = 30.0
# How much of an endpoint's own text a message quotes.
QUOTED_CHARS = 200
# The largest reply read: an answer is a word or a number, an error a sentence.
MAX_REPLY_BYTES = 4 * 1024 * 1024
# How long the look at the endpoint's list of models may take.
MODELS_WAIT_S = 10.0

RETRIED_STATUS = frozenset({429, *range(500, 600)})
# What servers say when a prompt does not fit the model's context (OpenAI, vLLM,
# llama.cpp and its Python server, LiteLLM).
_CONTEXT_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
_CONTEXT_WORDS = re.compile(
    r"context (?:length|window|size)|maximum context|too many tokens|prompt is too long",
    re.IGNORECASE,
)

T = TypeVar("T")


class JudgeError(PPPError):
    """The endpoint could not judge: one line naming it."""


class Stopped(Exception):
    """Another request failed and the work is stopping: this one was not sent."""


class TooLong(Exception):
    """The endpoint refused the prompt as longer than the model's context."""


class _TooLarge(Exception):
    """The reply is larger than MAX_REPLY_BYTES."""


@dataclass(frozen=True)
class Answer:
    text: str
    cut_off: bool  # finish_reason "length": stopped at max_tokens, mid-answer
    model: str | None  # the model the reply names


@dataclass(frozen=True)
class _Reply:
    status: int
    reason: str
    headers: httpx.Headers
    body: bytes


def shown_endpoint(base_url: str) -> str:
    """The endpoint as messages name it: without a user or password in the URL."""
    return inline(re.sub(r"^(\w+://)[^/@]*@", r"\1", base_url))


def api_key(judge: JudgeSettings) -> str | None:
    """The key, from the environment variable [ppp.judge] names; None without one."""
    if not judge.api_key_env:
        return None
    return os.environ.get(judge.api_key_env) or None


def secrets_of(judge: JudgeSettings) -> Secrets:
    """What no output may show: the key, and a password in base_url."""
    return Secrets.of(api_key(judge), *url_credentials(judge.base_url))


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The pause a Retry-After header asks for, in seconds (a number or an HTTP date)."""
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def pause_before(attempt: int, asked: float | None) -> float:
    """The pause before try `attempt + 1` (attempt counts from 1)."""
    wait = asked if asked is not None else BACKOFF_BASE_S * 2 ** (attempt - 1)
    return min(wait, MAX_WAIT_S)


def read_json(body: bytes) -> tuple[bool, Any]:
    """(True, the document) for a body that is JSON Python can hold; (False, None) for
    anything else: not JSON, not UTF-8, nested too deeply, a number too long."""
    try:
        return True, json.loads(body)
    except (ValueError, RecursionError, UnicodeDecodeError):
        return False, None


def same_model(asked: str, named: str) -> bool:
    """Whether a reply naming `named` comes from the model `asked` for: the same name
    (any case), a dated release of it (gpt-4o-mini-2024-07-18), or Ollama's :latest."""
    asked, named = asked.lower(), named.lower()
    return named in (asked, f"{asked}:latest") or named.startswith(f"{asked}-")


class Client:
    """Chat-completion requests to one endpoint and model, from any number of threads."""

    def __init__(
        self,
        judge: JudgeSettings,
        stop: threading.Event | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.judge = judge
        self.endpoint = shown_endpoint(judge.base_url)
        self.url = f"{judge.base_url}/chat/completions"
        self.stop = stop or threading.Event()
        self.secrets = secrets_of(judge)
        self._warn = warn
        self._warned = False
        self._lock = threading.Lock()
        self._listed = False  # the endpoint's list of models was read
        key = api_key(judge)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="judge-requests", daemon=True
        )
        self._thread.start()

        async def open_client() -> httpx.AsyncClient:
            return httpx.AsyncClient(
                timeout=httpx.Timeout(judge.timeout_s),
                headers=headers,
                limits=httpx.Limits(max_connections=judge.concurrency),
            )

        self.http = self._call(open_client())

    def close(self) -> None:
        """Cancel what is in flight, close the connections and end the loop's thread."""
        if self._loop.is_closed():
            return

        async def shut() -> None:
            current = asyncio.current_task()
            tasks = [task for task in asyncio.all_tasks() if task is not current]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.http.aclose()
            # As asyncio.run ends: every async generator still open is finished here,
            # not left as a task the closed loop never runs.
            await asyncio.get_running_loop().shutdown_asyncgens()

        try:
            asyncio.run_coroutine_threadsafe(shut(), self._loop).result(MODELS_WAIT_S)
        except TimeoutError:
            pass  # the daemon thread ends with the process
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(MODELS_WAIT_S)
            if not self._thread.is_alive():
                self._loop.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run `coroutine` on the client's loop and wait for it in this thread."""
        try:
            return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()
        except concurrent.futures.CancelledError:
            raise Stopped from None

    def _pause(self, seconds: float) -> None:
        if self.stop.wait(seconds):
            raise Stopped

    def quoted(self, text: str) -> str:
        """An endpoint's own words as a message shows them: every secret hidden, made
        safe for a terminal, on one line, cut short."""
        text = self.secrets.mask(text[: 4 * QUOTED_CHARS + self.secrets.longest])
        text = " ".join(inline(text).split())
        return text if len(text) <= QUOTED_CHARS else text[: QUOTED_CHARS - 1] + "…"

    def warn(self, line: str) -> None:
        """Say `line` once: the first warning of this client is its only one."""
        with self._lock:
            if self._warned:
                return
            self._warned = True
        if self._warn is not None:
            self._warn(line)

    # -- one request, bounded ----------------------------------------------------------

    async def _fetch(
        self, method: str, url: str, payload: Any = None, wait: float | None = None
    ) -> _Reply:
        """One request and its whole reply, within `wait` seconds (timeout_s) from start
        to end and MAX_REPLY_BYTES of body (after any content encoding is undone)."""
        async with asyncio.timeout(self.judge.timeout_s if wait is None else wait):
            async with self.http.stream(method, url, json=payload) as response:
                declared = response.headers.get("content-length", "").strip()
                if declared.isdigit() and (len(declared) > 12 or int(declared) > MAX_REPLY_BYTES):
                    raise _TooLarge
                body = bytearray()
                # Closed here whatever ends the loop: a reply cut short leaves no
                # generator for the loop to finish after it has stopped.
                read = cast(AsyncGenerator[bytes, None], response.aiter_bytes())  # it is one
                async with contextlib.aclosing(read) as chunks:
                    async for chunk in chunks:
                        body += chunk
                        if len(body) > MAX_REPLY_BYTES:
                            raise _TooLarge
                return _Reply(
                    response.status_code, response.reason_phrase, response.headers, bytes(body)
                )

    # -- the model's name --------------------------------------------------------------

    def check_model(self) -> None:
        """Warn when the endpoint lists its models (GET {base_url}/models) and the one
        configured is not among them. An endpoint without such a list, or that fails to
        give it, is left to the requests to judge (and their replies' names)."""
        try:
            reply = self._call(
                self._fetch(
                    "GET",
                    f"{self.judge.base_url}/models",
                    wait=min(self.judge.timeout_s, MODELS_WAIT_S),
                )
            )
        except (TimeoutError, httpx.HTTPError, httpx.InvalidURL, _TooLarge, Stopped):
            return
        ok, document = read_json(reply.body) if reply.status == 200 else (False, None)
        listed = document.get("data") if ok and isinstance(document, dict) else None
        names = [
            entry["id"]
            for entry in listed or ()
            if isinstance(entry, dict) and isinstance(entry.get("id"), str)
        ]
        if not names:
            return
        self._listed = True
        if not any(same_model(self.judge.model, name) for name in names):
            shown = ", ".join(repr(self.quoted(name)) for name in names[:3])
            more = f" and {len(names) - 3:,} more" if len(names) > 3 else ""
            self.warn(
                f"{self.endpoint} does not serve the model {self.quoted(self.judge.model)!r}"
                f" (it lists {shown}{more}); its answers are kept as"
                " ppp.judge.model's: is the name right?"
            )

    def _check_named(self, named: Any) -> None:
        if self._listed or self._warned or not isinstance(named, str) or not named:
            return
        if not same_model(self.judge.model, named):
            self.warn(
                f"{self.endpoint} was asked for the model {self.quoted(self.judge.model)!r}"
                f" and answers as {self.quoted(named)!r}; its answers are kept as"
                " ppp.judge.model's: is the name right?"
            )

    # -- asking ------------------------------------------------------------------------

    def ask(self, prompt: Prompt) -> Answer:
        """The model's answer to `prompt` (its text, possibly empty). A failure stops
        this client's other requests at once: none is sent after it."""
        try:
            return self._ask(prompt)
        except JudgeError:
            self.stop.set()
            raise

    def _ask(self, prompt: Prompt) -> Answer:
        body: dict[str, Any] = {
            "model": self.judge.model,
            "messages": [{"role": role, "content": content} for role, content in prompt.messages],
            "temperature": 0,
            "stream": False,
        }
        if self.judge.max_tokens:
            body["max_tokens"] = self.judge.max_tokens
        status_tries = transport_tries = 0
        while True:
            if self.stop.is_set():
                raise Stopped
            try:
                reply = self._call(self._fetch("POST", self.url, body))
            except (TimeoutError, httpx.TimeoutException):
                transport_tries += 1
                if transport_tries >= TRANSPORT_TRIES:
                    raise JudgeError(
                        f"{self.endpoint}: no answer within {self.judge.timeout_s:g} s"
                        f" ({transport_tries} tries); ppp.judge.timeout_s sets the wait"
                    ) from None
                self._pause(pause_before(transport_tries, None))
                continue
            except httpx.TransportError as error:
                transport_tries += 1
                if transport_tries >= TRANSPORT_TRIES:
                    raise JudgeError(
                        f"{self.endpoint}: {_transport_reason(error)} ({transport_tries} tries);"
                        " is the server running at ppp.judge.base_url?"
                    ) from None
                self._pause(pause_before(transport_tries, None))
                continue
            except _TooLarge:
                raise JudgeError(
                    f"{self.endpoint}: the reply is larger than"
                    f" {MAX_REPLY_BYTES // 2**20} MB, far beyond an answer; is"
                    " ppp.judge.base_url an OpenAI-compatible endpoint?"
                ) from None
            except (httpx.HTTPError, httpx.InvalidURL) as error:
                raise JudgeError(
                    f"{self.endpoint}: the request failed ({type(error).__name__});"
                    " check ppp.judge.base_url"
                ) from None
            if reply.status in RETRIED_STATUS:
                status_tries += 1
                if status_tries >= STATUS_TRIES:
                    raise JudgeError(
                        f"{self.endpoint}: answered {self._status(reply)} {status_tries} times"
                        f"{self._their_words(reply)}; try again later"
                    )
                self._pause(pause_before(status_tries, retry_after(reply.headers)))
                continue
            return self._answer(reply)

    def _answer(self, reply: _Reply) -> Answer:
        ok, document = read_json(reply.body)
        if reply.status != 200:
            if reply.status in (400, 413, 422) and _exceeds_context(document):
                raise TooLong
            hint = {
                401: "; is the key in the variable ppp.judge.api_key_env names?",
                403: "; is the key in the variable ppp.judge.api_key_env names?",
                404: "; check ppp.judge.base_url (it ends before /chat/completions)"
                " and ppp.judge.model",
            }.get(reply.status, "")
            raise JudgeError(
                f"{self.endpoint}: refused the request ({self._status(reply)})"
                f"{self._their_words(reply)}{hint}"
            )
        if not ok:
            raise JudgeError(
                f"{self.endpoint}: the reply is not JSON (or not JSON a reply holds); is"
                " ppp.judge.base_url an OpenAI-compatible endpoint (often ending in /v1)?"
            )
        choices = document.get("choices") if isinstance(document, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise JudgeError(f"{self.endpoint}: the reply has no choices{self._their_words(reply)}")
        self._check_named(document.get("model"))
        message = choices[0].get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):  # content parts: their text, joined
            content = "".join(
                part.get("text", "")
                for part in content
                if isinstance(part, dict) and isinstance(part.get("text"), str)
            )
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise JudgeError(f"{self.endpoint}: the reply's message has no text content")
        named = document.get("model")
        return Answer(
            content,
            choices[0].get("finish_reason") == "length",
            named if isinstance(named, str) else None,
        )

    def _status(self, reply: _Reply) -> str:
        phrase = self.quoted(reply.reason)
        return f"{reply.status} {phrase}" if phrase else str(reply.status)

    def _their_words(self, reply: _Reply) -> str:
        """The endpoint's own error message, if its body has one: quoted."""
        ok, document = read_json(reply.body)
        error = _error_message(document) if ok else None
        return f": {self.quoted(error)}" if error else ""


def _error_message(document: Any) -> str | None:
    """An error body's message: OpenAI's {"error": {"message": ...}}, {"error": "..."},
    or vLLM's and others' top-level "message" or "detail"."""
    if not isinstance(document, dict):
        return None
    error = document.get("error")
    if isinstance(error, dict):
        error = error.get("message")
    if not isinstance(error, str) or not error.strip():
        error = document.get("message", document.get("detail"))
    return error if isinstance(error, str) and error.strip() else None


def _exceeds_context(document: Any) -> bool:
    """Whether an error body says the prompt is longer than the model's context."""
    if not isinstance(document, dict):
        return False
    error = document.get("error")
    if isinstance(error, dict) and any(
        isinstance(error.get(key), str) and error[key] in _CONTEXT_CODES for key in ("code", "type")
    ):
        return True
    message = _error_message(document)
    return message is not None and _CONTEXT_WORDS.search(message) is not None


def _transport_reason(error: httpx.TransportError) -> str:
    if isinstance(error, httpx.ConnectError):
        return "cannot connect"
    if isinstance(error, httpx.RemoteProtocolError):
        return "the connection closed without a complete reply"
    if isinstance(error, httpx.UnsupportedProtocol):
        return "not an http:// or https:// URL"
    return f"connection failed ({type(error).__name__})"
