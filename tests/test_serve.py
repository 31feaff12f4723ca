"""`ppp-tui serve`: the app behind textual-serve (the server itself is not started here)."""

from __future__ import annotations

import shlex
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from ppp_tui.cli import cli
from ppp_tui.storage.demo import write_demo


class FakeServer:
    made: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, command: str, host: str, port: int, title: str | None = None) -> None:
        FakeServer.made.append({"command": command, "host": host, "port": port, "title": title})

    def serve(self) -> None:
        FakeServer.made[-1]["served"] = True


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> type[FakeServer]:
    import textual_serve.server

    FakeServer.made = []
    monkeypatch.setattr(textual_serve.server, "Server", FakeServer)
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
