"""One request to an OpenAI-compatible endpoint: POST {base_url}/chat/completions.

httpx speaks the protocol. A 429 or a 5xx answer is tried again after a pause that
honours Retry-After (capped at `MAX_WAIT_S`) or else doubles from `BACKOFF_BASE_S`;
a timeout or a broken connection is tried again a few times. What cannot be answered
(tries used up, a refusal such as 401 or 404, a reply that is not the protocol's)
raises `JudgeError`: one line naming the endpoint, never the key, with the endpoint's
own words made safe for a terminal. A client shared by threads stops sending once
`stop` is set.
"""

from __future__ import annotations

import email.utils
import json
import math
import os
import re
import threading
import time
from typing import Any

import httpx

from ..core.errors import PPPError
from ..core.judge import Prompt
from ..core.settings import JudgeSettings
from ..safe_text import inline

# Tries of one request answered 429 or 5xx, and of one that timed out or whose
# connection failed; the pause before try n + 1 is BACKOFF_BASE_S * 2**(n - 1), or what
# Retry-After asks, never more than MAX_WAIT_S. Module constants so tests run fast.
STATUS_TRIES = 5
TRANSPORT_TRIES = 3
BACKOFF_BASE_S = 1.0
MAX_WAIT_S = 30.0
# How much of an endpoint's own error text a message quotes.
QUOTED_CHARS = 200

RETRIED_STATUS = frozenset({429, *range(500, 600)})


class JudgeError(PPPError):
    """The endpoint could not judge: one line naming it."""


class Stopped(Exception):
    """Another request failed and the work is stopping: this one was not sent."""


def shown_endpoint(base_url: str) -> str:
    """The endpoint as messages name it: without a user or password in the URL."""
    return inline(re.sub(r"^(\w+://)[^/@]*@", r"\1", base_url))


def api_key(judge: JudgeSettings) -> str | None:
    """The key, from the environment variable [ppp.judge] names; None without one."""
    if not judge.api_key_env:
        return None
    return os.environ.get(judge.api_key_env) or None


def retry_after(response: httpx.Response) -> float | None:
    """The pause a Retry-After header asks for, in seconds (a number or an HTTP date)."""
    value = response.headers.get("retry-after")
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


class Client:
    """Chat-completion requests to one endpoint and model, from any number of threads."""

    def __init__(self, judge: JudgeSettings, stop: threading.Event | None = None) -> None:
        self.judge = judge
        self.endpoint = shown_endpoint(judge.base_url)
        self.url = f"{judge.base_url}/chat/completions"
        self.stop = stop or threading.Event()
        key = api_key(judge)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.http = httpx.Client(
            timeout=httpx.Timeout(judge.timeout_s),
            headers=headers,
            limits=httpx.Limits(max_connections=judge.concurrency),
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _pause(self, seconds: float) -> None:
        if self.stop.wait(seconds):
            raise Stopped

    def ask(self, prompt: Prompt) -> str:
        """The model's answer to `prompt` (its text, possibly empty). A failure stops
        this client's other requests at once: none is sent after it."""
        try:
            return self._ask(prompt)
        except JudgeError:
            self.stop.set()
            raise

    def _ask(self, prompt: Prompt) -> str:
        body = {
            "model": self.judge.model,
            "messages": [{"role": role, "content": content} for role, content in prompt.messages],
            "temperature": 0,
            "stream": False,
        }
        status_tries = transport_tries = 0
        while True:
            if self.stop.is_set():
                raise Stopped
            try:
                response = self.http.post(self.url, json=body)
            except httpx.TimeoutException:
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
            except (httpx.HTTPError, httpx.InvalidURL) as error:
                raise JudgeError(
                    f"{self.endpoint}: the request failed ({type(error).__name__});"
                    " check ppp.judge.base_url"
                ) from None
            if response.status_code in RETRIED_STATUS:
                status_tries += 1
                if status_tries >= STATUS_TRIES:
                    raise JudgeError(
                        f"{self.endpoint}: answered {_status(response)} {status_tries} times"
                        f"{_their_words(response)}; try again later"
                    )
                self._pause(pause_before(status_tries, retry_after(response)))
                continue
            return self._content(response)

    def _content(self, response: httpx.Response) -> str:
        if response.status_code != 200:
            hint = {
                401: "; is the key in the variable ppp.judge.api_key_env names?",
                403: "; is the key in the variable ppp.judge.api_key_env names?",
                404: "; check ppp.judge.base_url (it ends before /chat/completions)"
                " and ppp.judge.model",
            }.get(response.status_code, "")
            raise JudgeError(
                f"{self.endpoint}: refused the request ({_status(response)})"
                f"{_their_words(response)}{hint}"
            )
        try:
            reply = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise JudgeError(
                f"{self.endpoint}: the reply is not JSON; is ppp.judge.base_url an"
                " OpenAI-compatible endpoint (often ending in /v1)?"
            ) from None
        choices = reply.get("choices") if isinstance(reply, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise JudgeError(f"{self.endpoint}: the reply has no choices{_their_words(response)}")
        message = choices[0].get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):  # content parts: their text, joined
            content = "".join(
                part.get("text", "")
                for part in content
                if isinstance(part, dict) and isinstance(part.get("text"), str)
            )
        if content is None:
            return ""
        if not isinstance(content, str):
            raise JudgeError(f"{self.endpoint}: the reply's message has no text content")
        return content


def _status(response: httpx.Response) -> str:
    phrase = response.reason_phrase
    return f"{response.status_code} {inline(phrase)}" if phrase else str(response.status_code)


def _their_words(response: httpx.Response) -> str:
    """The endpoint's own error message, if its body has one: made safe, cut short."""
    try:
        body: Any = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return ""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        error = error.get("message")
    if not isinstance(error, str) or not error.strip():
        return ""
    text = " ".join(inline(error).split())
    if len(text) > QUOTED_CHARS:
        text = text[: QUOTED_CHARS - 1] + "…"
    return f": {text}"


def _transport_reason(error: httpx.TransportError) -> str:
    if isinstance(error, httpx.ConnectError):
        return "cannot connect"
    if isinstance(error, httpx.RemoteProtocolError):
        return "the connection closed without a complete reply"
    if isinstance(error, httpx.UnsupportedProtocol):
        return "not an http:// or https:// URL"
    return f"connection failed ({type(error).__name__})"
