"""`ppp-tui serve`: textual-serve's web server with the guards a shared machine needs.

Each WebSocket starts an app process that can read the database and write marks, so
the server refuses what a browser page on another site could send (a WebSocket whose
Origin is not the page the server itself served), refuses more than a few sessions at
once, and, when it listens beyond this machine, asks for a token. On a loopback
address it also answers only to loopback host names, so a site whose name resolves
to 127.0.0.1 (DNS rebinding) is refused too.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp_jinja2
from aiohttp import web
from textual_serve.server import Server, to_int
from yarl import URL

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
DEFAULT_MAX_SESSIONS = 4
# RFC 6455's "try again later": a session refused because too many are open.
TRY_AGAIN_LATER = 1013


def _loopback_name(name: str) -> bool:
    """localhost or a loopback address (127.0.0.0/8, ::1), without asking DNS."""
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address to listen on) stays on this machine."""
    name = host.strip("[]").lower()
    if _loopback_name(name):
        return True
    try:
        found = socket.getaddrinfo(name, None)
    except (OSError, UnicodeError):
        return False
    addresses = {str(entry[4][0]) for entry in found}
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)


def new_token() -> str:
    return secrets.token_urlsafe(18)


def _host_port(authority: str, scheme: str = "http") -> tuple[str, int | None] | None:
    """('name', port) of a Host header or an origin's authority; None if it is not one."""
    try:
        url = URL(f"{scheme}://{authority}")
    except ValueError:
        return None
    if url.host is None:
        return None
    return url.host.strip("[]").lower(), url.port


class GuardedServer(Server):
    """textual-serve's Server with an Origin check, a session cap and an optional token."""

    def __init__(
        self,
        command: str,
        host: str,
        port: int,
        *,
        title: str,
        token: str | None = None,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
    ) -> None:
        super().__init__(command, host=host, port=port, title=title)
        self.token = token
        self.max_sessions = max_sessions
        self.loopback = is_loopback(host)
        self.sessions = 0
        # Cookies are not told apart by port: two servers on one host keep theirs apart.
        self.cookie = f"ppp_tui_token_{port}"

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._guard)
        return app

    async def on_startup(self, app: web.Application) -> None:
        """Quiet: the command line already said where the server listens."""

    # -- the checks ----------------------------------------------------------------------

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        refusal = self._host_refusal(request)
        if refusal is not None:
            raise web.HTTPForbidden(text=refusal)
        if request.path.startswith("/static/"):
            return await handler(request)  # the page's scripts and fonts: nothing private
        if self.token is not None and not self._token_given(request):
            raise web.HTTPForbidden(
                text="ppp-tui: this server needs its token: open the address with ?token=…"
                " that `ppp-tui serve` printed"
            )
        if request.path == "/ws":
            return await self._websocket(request, handler)
        if request.path == "/" and self.sessions >= self.max_sessions:
            raise web.HTTPServiceUnavailable(text=self._full())
        response = await handler(request)
        if self.token is not None and request.path == "/":
            response.set_cookie(self.cookie, self.token, httponly=True, samesite="Strict", path="/")
        return response

    def _host_refusal(self, request: web.Request) -> str | None:
        if not self.loopback:
            return None  # the token guards a server that listens beyond this machine
        host = _host_port(request.host)
        if host is None or not _loopback_name(host[0]):
            return "ppp-tui: this server answers only to localhost, 127.0.0.1 or [::1]"
        return None

    def _token_given(self, request: web.Request) -> bool:
        assert self.token is not None
        expected = self.token.encode()
        given = [request.query.get("token"), request.cookies.get(self.cookie)]
        return any(g is not None and hmac.compare_digest(g.encode(), expected) for g in given)

    def _origin_allowed(self, request: web.Request) -> bool:
        """The WebSocket comes from the page this server served (browsers always send an
        Origin; one that is missing or foreign is refused)."""
        origin = request.headers.get("Origin")
        if origin is None:
            return False
        try:
            url = URL(origin)
        except ValueError:
            return False
        if url.scheme not in ("http", "https") or url.host is None:
            return False
        seen = (url.host.strip("[]").lower(), url.port)
        served = _host_port(request.host, url.scheme)
        if served is None:
            return False
        if seen == served:
            return True
        # localhost, 127.0.0.1 and [::1] are one machine: the page may use one name and
        # the address bar another.
        return self.loopback and _loopback_name(seen[0]) and seen[1] == served[1]

    def _full(self) -> str:
        return (
            f"ppp-tui: {self.sessions} of {self.max_sessions} sessions are open already (see"
            " serve --max-sessions); close one and reload"
        )

    async def _websocket(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if not self._origin_allowed(request):
            raise web.HTTPForbidden(
                text="ppp-tui: WebSocket refused: it does not come from this server's page"
            )
        if self.sessions >= self.max_sessions:
            websocket = web.WebSocketResponse()
            await websocket.prepare(request)
            await websocket.close(code=TRY_AGAIN_LATER, message=self._full()[:120].encode())
            return websocket
        self.sessions += 1  # counted before any await: a burst cannot overshoot
        try:
            return await handler(request)
        finally:
            self.sessions -= 1

    # -- the page --------------------------------------------------------------------------

    @aiohttp_jinja2.template("app_index.html")
    async def handle_index(self, request: web.Request) -> dict[str, Any]:
        """The page, with its addresses on the host the browser used (the cookie and the
        Origin check then agree with it, whatever address the server listens on)."""
        base = f"{request.scheme}://{request.host}"
        websocket = ("wss" if request.scheme == "https" else "ws") + f"://{request.host}/ws"
        return {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": websocket,
            "config": {"static": {"url": f"{base}/static/"}},
            "application": {"name": self.title},
        }
