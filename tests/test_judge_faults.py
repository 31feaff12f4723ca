"""`ppp-tui judge` against endpoints that misbehave (judge_server.py's faults).

Whatever the endpoint sends, the key (and a password in base_url) never shows in the
output or the database; a reply without bounds (endless, a byte at a time, a terabyte
announced, a gzip bomb), JSON nested 100,000 deep or holding a 5,000-digit number, on
200, 401 and 500 alike: one line, exit 1, no traceback, nothing lost.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import SECRET, UNSAFE, one_line_error, question_rows, run_judge, write_config
from judge_server import Server

from ppp_tui.cli import cli
from ppp_tui.core.masking import Secrets, masked_url, url_credentials
from ppp_tui.judging import client as judge_client

pytestmark = pytest.mark.usefixtures("fast_retries")

KEY_ENV = {"JUDGE_KEY": SECRET}
PASSWORD = "pw-Very-Secret-7731"


def fragments(secret: str) -> list[str]:
    return [secret[i : i + 8] for i in range(len(secret) - 7)]


def assert_hidden(secret: str, text: str) -> None:
    """Neither `secret` nor 8 characters of it in a row are in `text`."""
    shown = [piece for piece in fragments(secret) if piece in text]
    assert not shown, (shown, text)


def stored_bytes(folder: Path) -> str:
    return "".join(
        path.read_bytes().decode("latin-1")
        for path in folder.iterdir()
        if path.is_file() and path.name != "config.toml"
    )


# -- secrets -----------------------------------------------------------------------


def test_secrets_are_hidden_whole_and_by_eight_characters_in_a_row() -> None:
    secrets = Secrets.of(SECRET, None, "", "abc")
    assert secrets.values == (SECRET,)  # none, empty and 3 characters: nothing to hide
    assert secrets.mask(f"key {SECRET}, again {SECRET}.") == "key ***, again ***."
    # Cut short or run into other text, 8 characters of it in a row are still hidden.
    assert secrets.mask(f"x{SECRET[3:15]}y") == "x***y"
    assert secrets.mask(f"[{SECRET[:8]}]") == "[***]"
    # Fewer than 8 in a row stay: the head and tail providers quote to tell keys apart.
    hint = f"{SECRET[:6]}...{SECRET[-4:]}"
    assert secrets.mask(hint) == hint
    assert secrets.mask("nothing here") == "nothing here"
    assert Secrets.of("pw12").mask("a pw12 b pw1") == "a *** b pw1"


@pytest.mark.parametrize(
    ("url", "shown", "secrets"),
    [
        ("http://localhost:11434/v1", "http://localhost:11434/v1", []),
        ("http://me:s%40cret-pass@h/v1", "http://me:***@h/v1", ["s%40cret-pass", "s@cret-pass"]),
        ("https://TOKEN-abcdefgh@h/v1", "https://***@h/v1", ["TOKEN-abcdefgh"]),
        ("http://me:@h/v1", "http://me:***@h/v1", []),
    ],
)
def test_a_password_in_a_url_is_found_and_hidden(url: str, shown: str, secrets: list[str]) -> None:
    assert masked_url(url) == shown
    assert sorted(url_credentials(url)) == sorted(secrets)


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ("echo-key-401", "refused the request (401 Unauthorized): Incorrect API key provided: ***"),
        ("echo-key-reason", "refused the request (401 Unauthorized key ***)"),
        ("echo-key-400", "refused the request (400 Bad Request): Incorrect API key provided: ***"),
        ("echo-key-500", "answered 500 Internal Server Error 5 times: Incorrect API key"),
        ("echo-key-200", "the reply has no choices: Incorrect API key provided: ***"),
    ],
)
def test_a_key_the_endpoint_echoes_is_never_shown(
    judge_db: Path, tmp_path: Path, server: Server, fault: str, expected: str
) -> None:
    config = write_config(tmp_path / "config.toml", server, api_key_env="JUDGE_KEY")
    server.faults = [fault] * (judge_client.STATUS_TRIES if fault.endswith("500") else 1)
    before = question_rows(judge_db)
    result = run_judge(judge_db, config, env=KEY_ENV)
    line = one_line_error(result)
    assert expected in line
    assert_hidden(SECRET, result.output)
    assert server.headers[0]["Authorization"] == f"Bearer {SECRET}"  # it was sent
    assert question_rows(judge_db) == before


def test_the_head_and_tail_of_a_key_some_providers_quote_stay(
    judge_db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server, api_key_env="JUDGE_KEY")
    server.faults = ["echo-key-partial"]
    line = one_line_error(run_judge(judge_db, config, env=KEY_ENV))
    assert f"{SECRET[:6]}...{SECRET[-4:]}" in line
    assert_hidden(SECRET, line)


def test_a_key_in_an_answer_is_never_stored(judge_db: Path, tmp_path: Path, server: Server) -> None:
    config = write_config(tmp_path / "config.toml", server, api_key_env="JUDGE_KEY")
    server.faults = ["echo-key-answer"] * 200
    result = run_judge(judge_db, config, "--technical", env=KEY_ENV)
    assert result.exit_code == 0, result.output
    assert_hidden(SECRET, result.output)
    assert_hidden(SECRET, stored_bytes(tmp_path))
    conn = sqlite3.connect(judge_db)
    answers = [row[0] for row in conn.execute("SELECT answer FROM judgments")]
    conn.close()
    assert answers and all(answer.endswith("(key ***)") for answer in answers)


def test_a_password_in_base_url_is_never_shown(
    judge_db: Path, tmp_path: Path, server: Server
) -> None:
    url = server.base_url.replace("http://", f"http://judge:{PASSWORD}@")
    config = write_config(tmp_path / "config.toml", server, base_url=url)
    server.faults = ["echo-key-401"]
    result = run_judge(judge_db, config)
    line = one_line_error(result)
    assert "Incorrect API key provided: ***" in line and server.base_url in line
    assert server.headers[0]["Authorization"].startswith("Basic ")  # it was sent
    shown = CliRunner().invoke(cli, ["config", "show", "--config", str(config)])
    document = CliRunner().invoke(cli, ["config", "show", "--json", "--config", str(config)])
    assert shown.exit_code == document.exit_code == 0, shown.output
    assert json.loads(document.stdout)["judge"]["base_url"] == masked_url(url)
    assert "judge:***@127.0.0.1" in shown.stdout
    for output in (result.output, shown.output, document.output):
        assert_hidden(PASSWORD, output)
    # A bad base_url holding a password is refused without showing it.
    (tmp_path / "bad.toml").write_text(
        f'[ppp.judge]\nbase_url = "http://u:{PASSWORD}@h:99999/v1"\nmodel = "m"\n',
        encoding="utf-8",
    )
    refused = CliRunner().invoke(
        cli, ["config", "validate", "--config", str(tmp_path / "bad.toml")]
    )
    assert "u:***@h:99999" in one_line_error(refused)
    assert_hidden(PASSWORD, refused.output)


# -- replies without bounds --------------------------------------------------------


@pytest.mark.parametrize("fault", ["endless", "endless-close", "huge-length", "gzip-bomb"])
def test_a_reply_larger_than_the_cap_is_refused_at_once(
    judge_db: Path, tmp_path: Path, server: Server, fault: str
) -> None:
    config = write_config(tmp_path / "config.toml", server)
    server.faults = [fault]
    server.bomb_mb = 16  # inflates far past the 4 MB cap
    before = question_rows(judge_db)
    start = time.monotonic()
    line = one_line_error(run_judge(judge_db, config))
    assert time.monotonic() - start < 4
    assert f"{server.base_url}: the reply is larger than 4 MB" in line
    assert question_rows(judge_db) == before


@pytest.mark.parametrize("fault", ["trickle", "trickle-status"])
def test_a_reply_sent_a_byte_at_a_time_meets_the_whole_deadline(
    judge_db: Path, tmp_path: Path, server: Server, fault: str
) -> None:
    # Each byte comes well within the timeout; the reply as a whole never would.
    config = write_config(tmp_path / "config.toml", server, timeout_s=0.6)
    server.trickle_s = 0.05
    server.faults = [fault] * judge_client.TRANSPORT_TRIES
    start = time.monotonic()
    line = one_line_error(run_judge(judge_db, config))
    elapsed = time.monotonic() - start
    assert "no answer within 0.6 s (3 tries)" in line
    assert elapsed < judge_client.TRANSPORT_TRIES * 0.6 + 3, elapsed


@pytest.mark.parametrize("status", ["200", "401", "500"])
@pytest.mark.parametrize("shape", ["deep", "bignum"])
def test_json_python_cannot_hold_is_one_line(
    judge_db: Path, tmp_path: Path, server: Server, shape: str, status: str
) -> None:
    config = write_config(tmp_path / "config.toml", server)
    server.faults = [f"{shape}-{status}"] * (judge_client.STATUS_TRIES if status == "500" else 1)
    before = question_rows(judge_db)
    line = one_line_error(run_judge(judge_db, config))
    expected = {
        "200": "the reply is not JSON",
        "401": "refused the request (401 Unauthorized); is the key",
        "500": "answered 500 Internal Server Error 5 times; try again later",
    }[status]
    assert expected in line
    assert question_rows(judge_db) == before


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_an_endless_reply_keeps_the_process_small(
    judge_db: Path, tmp_path: Path, server: Server
) -> None:
    """As a process: an endless body is refused within seconds, the process staying
    far below the 2 GB it reached when every byte was kept."""
    config = write_config(tmp_path / "config.toml", server)
    server.faults = ["endless"]
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    command = [sys.executable, "-m", "ppp_tui", "judge", "--db", str(judge_db)]
    process = subprocess.Popen(
        [*command, "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    peak = 0
    while process.poll() is None:
        for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                peak = max(peak, int(line.split()[1]) // 1024)
        time.sleep(0.02)
    _, err = process.communicate(timeout=30)
    stderr = err.decode()
    assert process.returncode == 1 and len(stderr.strip().splitlines()) == 1, stderr
    assert "larger than 4 MB" in stderr and "Traceback" not in stderr
    assert not UNSAFE.search(stderr)
    assert peak < 400, peak
