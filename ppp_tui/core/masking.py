"""Secrets kept out of what ppp-tui shows: an API key, or a password in a URL.

An endpoint may quote the key it was sent ("Incorrect API key provided: sk-...") in an
error's body, its reason phrase or even an answer. Every text of an endpoint's that
ppp-tui shows or stores goes through `Secrets.mask`, which hides each secret whole and
any 8 characters or more of one in a row (a key cut short still says too much). Shorter
fragments stay: the last four characters some providers quote to tell keys apart cannot
be used, and hiding every 3-character match would garble the message. A secret shorter
than 4 characters is not hidden at all for the same reason. No I/O here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

MASK = "***"
FRAGMENT = 8  # characters of a secret in a row that are hidden wherever they appear
SHORTEST = 4  # a secret shorter than this is not looked for

# scheme://userinfo@ at the start of a URL; userinfo is user[:password].
_USERINFO = re.compile(r"^(?P<scheme>[A-Za-z][\w+.-]*://)(?P<user>[^/@:]*)(?::(?P<pw>[^/@]*))?@")


def url_credentials(url: str) -> list[str]:
    """The secrets of a URL: its password (as written and decoded), or a user name that
    stands alone (`https://TOKEN@host`, a token in the user's place)."""
    found = _USERINFO.match(url)
    if found is None:
        return []
    secret = found.group("pw") if found.group("pw") is not None else found.group("user")
    return [value for value in {secret, unquote(secret)} if value]


def masked_url(url: str) -> str:
    """`url` with its password (or a user name standing alone) shown as ***."""
    found = _USERINFO.match(url)
    if found is None:
        return url
    if found.group("pw") is not None:
        userinfo = f"{found.group('user')}:{MASK}"
    else:
        userinfo = MASK if found.group("user") else ""
    return f"{found.group('scheme')}{userinfo}@{url[found.end() :]}"


@dataclass(frozen=True)
class Secrets:
    """The secrets to hide from a text."""

    values: tuple[str, ...] = ()

    @classmethod
    def of(cls, *values: str | None) -> Secrets:
        kept = {value for value in values if value and len(value) >= SHORTEST}
        return cls(tuple(sorted(kept, key=len, reverse=True)))

    @property
    def longest(self) -> int:
        return max((len(value) for value in self.values), default=0)

    def mask(self, text: str) -> str:
        """`text` with every secret, and every run of FRAGMENT or more characters of one,
        replaced by ***."""
        if not self.values or not text:
            return text
        hidden = bytearray(len(text))  # 1 where a character is part of a secret
        for value in self.values:
            pieces = {value} if len(value) < FRAGMENT else _fragments(value)
            for piece in pieces:
                start = text.find(piece)
                while start != -1:
                    hidden[start : start + len(piece)] = b"\x01" * len(piece)
                    start = text.find(piece, start + 1)
        if not any(hidden):
            return text
        parts: list[str] = []
        index = 0
        while index < len(text):
            if hidden[index]:
                while index < len(text) and hidden[index]:
                    index += 1
                parts.append(MASK)
            else:
                end = hidden.find(b"\x01", index)
                end = len(text) if end == -1 else end
                parts.append(text[index:end])
                index = end
        return "".join(parts)


def _fragments(value: str) -> set[str]:
    """Every FRAGMENT characters of `value` in a row (together they cover any longer run)."""
    return {value[i : i + FRAGMENT] for i in range(len(value) - FRAGMENT + 1)}
