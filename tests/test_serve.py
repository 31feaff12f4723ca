"""`ppp-tui serve`: the app behind textual-serve (the server itself is not started here)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import shlex
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer
from click.testing import CliRunner

from ppp_tui.cli import cli
from ppp_tui.serving import GuardedServer, is_loopback
from ppp_tui.storage.demo import write_demo


class FakeServer:
    made: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, command: str, host: str, port: int, **options: Any) -> None:
        FakeServer.made.append({"command": command, "host": host, "port": port, **options})

    def serve(self) -> None:
        FakeServer.made[-1]["served"] = True


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> type[FakeServer]:
    import ppp_tui.serving

    FakeServer.made = []
    monkeypatch.setattr(ppp_tui.serving, "GuardedServer", FakeServer)
    return FakeServer


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_serve_runs_this_python_s_browse_on_the_database(
    tmp_path: Path, fake_server: type[FakeServer]
) -> None:
    db = tmp_path / "runs.db"
    write_demo(db, 20, seed=1)
    port = _free_port()
    result = CliRunner().invoke(
        cli, ["serve", "--db", str(db), "--config", str(tmp_path / "c.toml"), "--port", str(port)]
    )
    assert result.exit_code == 0, result.output
    made = fake_server.made[-1]
    assert made["served"] and made["port"] == port and made["host"] == "127.0.0.1"
    argv = shlex.split(made["command"])
    assert argv[:4] == [sys.executable, "-m", "ppp_tui", "browse"]
    assert argv[argv.index("--db") + 1] == str(db)
    assert argv[argv.index("--config") + 1] == str(tmp_path / "c.toml")
    assert argv[argv.index("--reviewer") + 1] == "tester"  # the marks' reviewer goes along
    result = CliRunner().invoke(
        cli, ["serve", "--db", str(db), "--port", str(port), "--reviewer", "[/]ana"]
    )
    assert result.exit_code == 0, result.output
    argv = shlex.split(fake_server.made[-1]["command"])
    assert argv[argv.index("--reviewer") + 1] == "[/]ana"


def test_serve_refuses_a_missing_database_and_a_busy_port(
    tmp_path: Path, fake_server: type[FakeServer]
) -> None:
    runner = CliRunner()
    missing = runner.invoke(cli, ["serve", "--db", str(tmp_path / "none.db")])
    assert missing.exit_code == 1 and "no database here" in missing.output
    db = tmp_path / "runs.db"
    write_demo(db, 5, seed=1)
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        taken = runner.invoke(cli, ["serve", "--db", str(db), "--port", str(port)])
    assert taken.exit_code == 1 and f"cannot listen on 127.0.0.1:{port}" in taken.output
    assert "Traceback" not in taken.output and not fake_server.made
    bad = runner.invoke(cli, ["serve", "--db", str(db), "--port", "70000"])
    assert bad.exit_code == 2


def test_python_dash_m_is_the_same_program() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ppp_tui", "--help"], capture_output=True, text=True, check=True
    )
    assert "serve" in done.stdout and "browse" in done.stdout


# -- the server's guards, on a real loopback socket -----------------------------------

# An "app" that waits for the quit message the server sends when a session ends.
WAITS_FOR_QUIT = shlex.join([sys.executable, "-c", "import sys; sys.stdin.buffer.read(1)"])


@contextlib.asynccontextmanager
async def _served(**options: Any) -> AsyncIterator[tuple[TestClient[Any, Any], GuardedServer]]:
    server = GuardedServer(WAITS_FOR_QUIT, "127.0.0.1", 0, title="ppp-tui", **options)
    async with TestClient(TestServer(await server._make_app(), host="127.0.0.1")) as client:
        yield client, server
        for _ in range(100):  # every session's process has ended before the loop closes
            if not server.sessions:
                break
            await asyncio.sleep(0.05)
    # textual-serve never waits for its app processes: their transports are closed
    # when collected, which must happen while this loop still runs.
    gc.collect()
    await asyncio.sleep(0.05)


def _origin(client: TestClient[Any, Any], host: str = "127.0.0.1") -> str:
    return f"http://{host}:{client.port}"


async def _refused_status(client: TestClient[Any, Any], **options: Any) -> int:
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await client.ws_connect("/ws", **options)
    return refused.value.status


async def test_a_websocket_from_another_site_is_refused_and_one_from_the_page_opens() -> None:
    async with _served() as (client, server):
        assert await _refused_status(client, origin="http://evil.example") == 403
        assert await _refused_status(client, origin=f"http://evil.example:{client.port}") == 403
        assert await _refused_status(client) == 403  # no Origin: not from a browser page
        for host in ("127.0.0.1", "localhost", "[::1]"):
            websocket = await client.ws_connect("/ws", origin=_origin(client, host))
            assert server.sessions == 1
            await websocket.close()
        page = await client.get("/")
        assert page.status == 200
        assert f"ws://127.0.0.1:{client.port}/ws" in await page.text()


async def test_a_name_that_resolves_to_loopback_is_refused_on_a_loopback_server() -> None:
    # DNS rebinding: the attacker's own name, pointed at 127.0.0.1, is same-origin.
    async with _served() as (client, _):
        other_loopback = await client.get("/", headers={"Host": f"127.0.0.2:{client.port}"})
        assert other_loopback.status == 200
        rebound = f"evil.example:{client.port}"
        page = await client.get("/", headers={"Host": rebound})
        assert page.status == 403 and "only to localhost" in await page.text()
        status = await _refused_status(
            client, origin=f"http://{rebound}", headers={"Host": rebound}
        )
        assert status == 403


async def test_sessions_beyond_the_cap_are_refused_with_a_reason() -> None:
    async with _served(max_sessions=2) as (client, server):
        first = await client.ws_connect("/ws", origin=_origin(client))
        second = await client.ws_connect("/ws", origin=_origin(client))
        assert server.sessions == 2
        page = await client.get("/")
        assert page.status == 503 and "2 of 2 sessions" in await page.text()
        third = await client.ws_connect("/ws", origin=_origin(client))
        closing = await third.receive(timeout=5)
        assert closing.type == aiohttp.WSMsgType.CLOSE and closing.data == 1013
        assert "2 of 2 sessions are open already" in (closing.extra or "")
        await first.close()
        for _ in range(50):  # the server notices the close on its side
            if server.sessions == 1:
                break
            await asyncio.sleep(0.05)
        fourth = await client.ws_connect("/ws", origin=_origin(client))
        assert server.sessions == 2
        await fourth.close()
        await second.close()


async def test_with_a_token_the_page_and_the_websocket_need_it() -> None:
    async with _served(token="s3cret") as (client, server):
        assert (await client.get("/")).status == 403
        assert (await client.get("/?token=wrong")).status == 403
        assert (await client.get("/static/css/xterm.css")).status == 200  # public assets
        assert await _refused_status(client, origin=_origin(client)) == 403
        assert await _refused_status(client, origin=_origin(client), params={"token": "x"}) == 403
        page = await client.get("/?token=s3cret")
        assert page.status == 200
        assert page.cookies[server.cookie].value == "s3cret"
        # The page's script opens /ws without the query: the cookie carries the token.
        websocket = await client.ws_connect("/ws", origin=_origin(client))
        assert server.sessions == 1
        await websocket.close()


def test_is_loopback() -> None:
    for host in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost", "LOCALHOST"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "::", "192.168.1.5", "", "nosuch.invalid"):
        assert not is_loopback(host), host


def test_serve_on_a_network_address_warns_and_requires_a_token(
    tmp_path: Path, fake_server: type[FakeServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    import ppp_tui.serving

    db = tmp_path / "runs.db"
    write_demo(db, 5, seed=1)
    # Listening stays on loopback; the server is told it is not.
    monkeypatch.setattr(ppp_tui.serving, "is_loopback", lambda host: False)
    port = _free_port()
    result = CliRunner().invoke(cli, ["serve", "--db", str(db), "--port", str(port)])
    assert result.exit_code == 0, result.output
    token = fake_server.made[-1]["token"]
    assert token and len(token) >= 20
    assert "WARNING: 127.0.0.1 is not a loopback address" in result.output
    assert f"http://127.0.0.1:{port}/?token={token}" in result.output
    given = CliRunner().invoke(
        cli,
        ["serve", "--db", str(db), "--port", str(port), "--max-sessions", "2"],
        env={"PPP_TUI_SERVE_TOKEN": "mine"},
    )
    assert given.exit_code == 0, given.output
    assert fake_server.made[-1]["token"] == "mine" and fake_server.made[-1]["max_sessions"] == 2
    empty = CliRunner().invoke(cli, ["serve", "--db", str(db), "--token", ""])
    assert empty.exit_code == 2 and "--token" in empty.output


def test_serve_on_loopback_needs_no_token(tmp_path: Path, fake_server: type[FakeServer]) -> None:
    db = tmp_path / "runs.db"
    write_demo(db, 5, seed=1)
    result = CliRunner().invoke(cli, ["serve", "--db", str(db), "--port", str(_free_port())])
    assert result.exit_code == 0 and "WARNING" not in result.output
    assert fake_server.made[-1]["token"] is None and fake_server.made[-1]["max_sessions"] == 4


def test_serve_on_an_unknown_host_says_so(tmp_path: Path, fake_server: type[FakeServer]) -> None:
    db = tmp_path / "runs.db"
    write_demo(db, 5, seed=1)
    result = CliRunner().invoke(cli, ["serve", "--db", str(db), "--host", "nosuch.invalid"])
    assert result.exit_code == 1
    assert result.output == "Error: cannot listen on nosuch.invalid:8000: unknown host\n"
    assert not fake_server.made


def _ipv6_loopback() -> bool:
    try:
        with socket.create_server(("::1", 0), family=socket.AF_INET6):
            return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback here")
def test_serve_on_ipv6_loopback(tmp_path: Path, fake_server: type[FakeServer]) -> None:
    db = tmp_path / "runs.db"
    write_demo(db, 5, seed=1)
    port = _free_port()
    result = CliRunner().invoke(
        cli, ["serve", "--db", str(db), "--host", "::1", "--port", str(port)]
    )
    assert result.exit_code == 0, result.output
    assert f"at http://[::1]:{port}/ " in result.output and "WARNING" not in result.output
