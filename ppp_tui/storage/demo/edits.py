"""The edits of files the demo's sessions make: the texts before and after each edit
tool call, diffed by the same code an import of real transcripts uses (a Codex patch is
parsed from its apply_patch text), so `ppp-tui diff session-… --demo` shows them."""

from __future__ import annotations

from ...core.sessions.changes import EditKind, Piece, SessionEdit, diff_edit
from ..sessions.patches import patch_edits


def _edit(path: str, old: str, new: str, kind: EditKind = EditKind.UPDATE) -> SessionEdit:
    edit = diff_edit(path, [Piece(old, new, 1, 1)], kind)
    assert edit is not None  # every demo edit changes its file
    return edit


def _patch(text: str) -> list[SessionEdit]:
    edits = patch_edits(text)
    assert edits is not None  # a well-formed patch
    return edits


SEARCH_BEFORE = """\
from fastapi import APIRouter, Depends, Query

from app.auth import api_key
from app.index import SearchIndex, get_index

router = APIRouter()


@router.get("/api/search")
def search(
    q: str = Query(..., min_length=1),
    page: int = 1,
    key: str = Depends(api_key),
    index: SearchIndex = Depends(get_index),
):
    return index.search(q, page=page)
"""

# Claude Code: a Redis fixed window shared by the workers, failing open.
RATELIMIT_CLAUDE = '''\
"""Per-API-key rate limiting for the public endpoints: a fixed one-minute window in
Redis, shared by every worker."""

import time

from fastapi import HTTPException
from redis import Redis, RedisError

LIMIT = 100  # requests per minute per API key
WINDOW = 60


def check(redis: Redis, key: str) -> None:
    window = int(time.time()) // WINDOW
    name = f"ratelimit:{key}:{window}"
    try:
        count = redis.incr(name)
        if count == 1:
            redis.expire(name, WINDOW)
    except RedisError:
        return  # fail open: Redis down must not take search down
    if count > LIMIT:
        retry = WINDOW - int(time.time()) % WINDOW
        raise HTTPException(429, "rate limit exceeded", {"Retry-After": str(retry)})
'''

SEARCH_CLAUDE = SEARCH_BEFORE.replace(
    "from app.auth import api_key\n",
    "from app import ratelimit\nfrom app.auth import api_key\nfrom app.cache import redis\n",
).replace(
    "    return index.search(q, page=page)\n",
    "    ratelimit.check(redis(), key)\n    return index.search(q, page=page)\n",
)

# Codex: a token-bucket middleware and its two tests, as one apply_patch.
CODEX_PATCH = """\
*** Begin Patch
*** Add File: app/middleware/ratelimit.py
+\"\"\"A token bucket per client: 100 requests a minute on /api/search.\"\"\"
+
+import time
+
+from starlette.middleware.base import BaseHTTPMiddleware
+from starlette.responses import JSONResponse
+
+RATE = 100 / 60  # tokens a second
+BURST = 100
+
+
+class RateLimit(BaseHTTPMiddleware):
+    def __init__(self, app):
+        super().__init__(app)
+        self.buckets = {}
+
+    async def dispatch(self, request, call_next):
+        if request.url.path != "/api/search":
+            return await call_next(request)
+        client = request.headers.get("X-API-Key") or request.client.host
+        tokens, at = self.buckets.get(client, (BURST, time.monotonic()))
+        now = time.monotonic()
+        tokens = min(BURST, tokens + (now - at) * RATE)
+        if tokens < 1:
+            wait = int((1 - tokens) / RATE) + 1
+            return JSONResponse({"detail": "rate limit exceeded"}, 429, {"Retry-After": str(wait)})
+        self.buckets[client] = (tokens - 1, now)
+        return await call_next(request)
*** Add File: tests/test_ratelimit.py
+def test_the_101st_request_in_a_minute_is_refused(client):
+    for _ in range(100):
+        assert client.get("/api/search?q=x", headers={"X-API-Key": "k"}).status_code == 200
+    answer = client.get("/api/search?q=x", headers={"X-API-Key": "k"})
+    assert answer.status_code == 429
+
+
+def test_a_refusal_says_when_to_retry(client):
+    for _ in range(101):
+        answer = client.get("/api/search?q=x", headers={"X-API-Key": "k"})
+    assert 1 <= int(answer.headers["Retry-After"]) <= 60
*** Update File: app/main.py
@@
 from fastapi import FastAPI

+from app.middleware.ratelimit import RateLimit
 from app.api import search

 app = FastAPI()
+app.add_middleware(RateLimit)
 app.include_router(search.router)
*** End Patch"""

SEARCH_GEMINI = (
    SEARCH_BEFORE.replace(
        "router = APIRouter()\n",
        "router = APIRouter()\n_counts: dict[tuple[str, int], int] = {}\n",
    )
    .replace(
        "    return index.search(q, page=page)\n",
        "    minute = int(time.time() // 60)\n"
        "    _counts[key, minute] = _counts.get((key, minute), 0) + 1\n"
        "    if _counts[key, minute] > 100:\n"
        "        retry = 60 - int(time.time()) % 60\n"
        '        raise HTTPException(429, headers={"Retry-After": str(retry)})\n'
        "    return index.search(q, page=page)\n",
    )
    .replace(
        "from fastapi import APIRouter, Depends, Query\n",
        "import time\n\nfrom fastapi import APIRouter, Depends, HTTPException, Query\n",
    )
)

CONFIG_BEFORE = """\
import configparser
from pathlib import Path

DEFAULTS = {"color": "auto", "pager": "less"}


def load(folder: Path) -> dict[str, str]:
    parser = configparser.ConfigParser()
    parser.read(folder / "config.ini")
    values = dict(DEFAULTS)
    if parser.has_section("cli"):
        values.update(parser["cli"])
    return values
"""

CONFIG_CLAUDE = """\
import configparser
import tomllib
import warnings
from pathlib import Path

DEFAULTS = {"color": "auto", "pager": "less"}


def load(folder: Path, verbose: bool = False) -> dict[str, str]:
    values = dict(DEFAULTS)
    toml = folder / "config.toml"
    if toml.exists():
        with toml.open("rb") as file:
            values.update(tomllib.load(file).get("cli", {}))
        return values
    parser = configparser.ConfigParser()
    if parser.read(folder / "config.ini") and verbose:
        warnings.warn("config.ini is deprecated: move its settings to config.toml")
    if parser.has_section("cli"):
        values.update(parser["cli"])
    return values
"""

CHANGELOG_BEFORE = """\
# Changelog

## Unreleased

## 2.3.0

- `--pager` chooses the pager.
"""

CHANGELOG_AFTER = CHANGELOG_BEFORE.replace(
    "## Unreleased\n",
    "## Unreleased\n\n- Settings are read from config.toml; config.ini is still read (with a"
    " warning under --verbose) until the next release.\n",
)

CODEX_CONFIG_PATCH = """\
*** Begin Patch
*** Update File: cli/config.py
@@
 import configparser
+import tomllib
 from pathlib import Path
@@ def load(folder: Path) -> dict[str, str]:
-    parser = configparser.ConfigParser()
-    parser.read(folder / "config.ini")
     values = dict(DEFAULTS)
+    toml = folder / "config.toml"
+    if toml.exists():
+        with toml.open("rb") as file:
+            values.update(tomllib.load(file).get("cli", {}))
+        return values
+    parser = configparser.ConfigParser()
+    parser.read(folder / "config.ini")
     if parser.has_section("cli"):
*** End Patch"""

UPLOAD_TEST_BEFORE = """\
func TestUploadResume(t *testing.T) {
\tdir := t.TempDir()
\tfor _, size := range []int{1 << 10, 1 << 20, 5 << 20} {
\t\tt.Run(fmt.Sprint(size), func(t *testing.T) {
\t\t\tt.Parallel()
\t\t\tpart := filepath.Join(dir, "upload.part")
\t\t\tresumeAndCheck(t, part, size)
\t\t})
\t}
}
"""

UPLOAD_TEST_AFTER = UPLOAD_TEST_BEFORE.replace("\tdir := t.TempDir()\n", "").replace(
    '\t\t\tpart := filepath.Join(dir, "upload.part")\n',
    '\t\t\tpart := filepath.Join(t.TempDir(), "upload.part") // one folder per subtest\n',
)


def rate_limit_claude() -> list[SessionEdit]:
    return [
        _edit("app/ratelimit.py", "", RATELIMIT_CLAUDE, EditKind.CREATE),
        _edit("app/api/search.py", SEARCH_BEFORE, SEARCH_CLAUDE),
    ]


def rate_limit_codex() -> list[SessionEdit]:
    return _patch(CODEX_PATCH)


def rate_limit_gemini() -> list[SessionEdit]:
    return [_edit("app/api/search.py", SEARCH_BEFORE, SEARCH_GEMINI)]


def toml_claude() -> list[SessionEdit]:
    return [_edit("cli/config.py", CONFIG_BEFORE, CONFIG_CLAUDE)]


def toml_changelog() -> list[SessionEdit]:
    return [_edit("CHANGELOG.md", CHANGELOG_BEFORE, CHANGELOG_AFTER)]


def toml_codex() -> list[SessionEdit]:
    return _patch(CODEX_CONFIG_PATCH)


def flaky_opus() -> list[SessionEdit]:
    return [_edit("storage/upload_test.go", UPLOAD_TEST_BEFORE, UPLOAD_TEST_AFTER)]
