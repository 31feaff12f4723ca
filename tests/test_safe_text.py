"""Hostile text in imported runs, config.toml and arguments never reaches the terminal.

Names, ids, stages, tasks and questions carrying escape sequences (OSC 52 sets the
clipboard, OSC 2 the window title, CSI 2J clears the screen, 0x9b is an 8-bit CSI),
bidi overrides, newlines and markup go through every command; nothing a terminal acts
on comes out, and --json still gives the exact values back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from helpers import HOSTILE, UNSAFE, hostile_runs, toml_key
from hypothesis import given
from hypothesis import strategies as st

from ppp_tui import safe_text
from ppp_tui.cli import cli
from ppp_tui.safe_text import inline, json_escape, literal


def test_inline_shows_every_control_character_on_one_line() -> None:
    assert inline("a\x1b]2;t\x07\nb\tc") == "a␛]2;t␇␊b␉c"
    assert inline("x\x9b2J\x7f") == "x\\x9b2J␡"
    assert inline("\u202eexe\u2066\u200e\u061c") == "<U+202E>exe<U+2066><U+200E><U+061C>"
    assert inline(None) == ""
    assert inline("[/] plain") == "[/] plain"  # markup is the app's business, kept as text


def test_literal_keeps_lines_or_folds_them() -> None:
    assert literal("one\n\ttwo\x1b[2J") == "one\n\ttwo␛[2J"
    assert literal("one\n\ttwo\x1b[2J", one_line=True) == "one two␛[2J"


def test_json_escape_is_the_same_json_value_with_nothing_raw() -> None:
    value = {"k\u202e": "\x1b\x7f\x85\x9b\u2066\u200f\ud800 ok é"}
    text = json_escape(json.dumps(value, ensure_ascii=False))
    assert not UNSAFE.search(text)
    assert "\ud800" not in text and "é" in text
    assert json.loads(text) == value


@given(st.text())
def test_no_text_gets_a_control_character_through(text: str) -> None:
    assert not UNSAFE.search(inline(text)) and "\n" not in inline(text)
    assert not UNSAFE.search(literal(text))
    assert not UNSAFE.search(literal(text, one_line=True)) and "\n" not in literal(text, True)
    # Text with nothing to neutralise is shown as it is.
    if not UNSAFE.search(text) and "\n" not in text and "\t" not in text:
        assert inline(text) == text


@given(
    st.recursive(
        st.none() | st.text(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)
    )
)
def test_json_escape_keeps_every_document(document: Any) -> None:
    text = json_escape(json.dumps(document, ensure_ascii=False))
    assert not UNSAFE.search(text)
    assert json.loads(text) == document


# -- the command line --------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A database and config.toml full of hostile text (runs imported, a stage table each)."""
    folder = tmp_path_factory.mktemp("hostile")
    runs = folder / "runs.json"
    runs.write_text(json.dumps(hostile_runs()), encoding="utf-8")
    config = folder / "config.toml"
    tables = "".join(
        f"\n[ppp.weights.{toml_key('st' + text)}]\ntechnical = 0.6\ninteraction = 0.4\n"
        for text in HOSTILE.values()
    )
    config.write_text("[ppp.weights]\ntechnical = 0.7\ninteraction = 0.3\n" + tables)
    db = folder / "runs.db"
    args = ["import", str(runs), "--db", str(db), "--config", str(config)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return {"runs": runs, "db": db, "config": config, "folder": folder}


def _invoke(paths: dict[str, Path], *args: str) -> Result:
    where = ["--db", str(paths["db"]), "--config", str(paths["config"])]
    return CliRunner().invoke(cli, [*args, *where])


def _assert_safe(result: Result) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    for name, stream in (("stdout", result.stdout), ("stderr", result.stderr)):
        found = UNSAFE.findall(stream)
        assert not found, f"{name} holds {found!r}: {stream!r}"


KEYS = list(HOSTILE)


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize(
    "command",
    [
        ("runs",),
        ("runs", "--stage", "st{text}"),
        ("rank", "run-{key}{text}"),
        ("rank", "run-{key}{text}", "--technical", "0.2"),
        ("regret",),
        ("regret", "--stage", "st{text}"),
        ("tune",),
        ("tune", "--per-stage"),
        ("tune", "--stage", "st{text}"),
        ("classify", "Which {text} do you want?"),
        ("config", "show"),
        ("config", "validate"),
        ("score", "{runs}"),
        # Errors quoting the data: unknown run, agent, stage; a missing file.
        ("rank", "missing{text}"),
        ("prefer", "run-{key}{text}", "nobody{text}"),
        ("prefer", "missing{text}", "a{text}"),
        ("tune", "--stage", "nowhere{text}"),
        ("import", "{folder}/missing{text}.json"),
        ("score", "{folder}/missing{text}.jsonl"),
        ("runs", "--bad-option{text}"),
        ("nosuchcommand{text}",),
    ],
    ids=lambda c: "-".join(c) if isinstance(c, tuple) else c,
)
def test_every_command_shows_hostile_text_safely(
    hostile: dict[str, Path], key: str, command: tuple[str, ...]
) -> None:
    values = {"key": key, "text": HOSTILE[key], **{k: str(v) for k, v in hostile.items()}}
    result = _invoke(hostile, *(part.format(**values) for part in command))
    _assert_safe(result)
    assert result.exit_code in (0, 1, 2)


def test_a_newline_in_an_id_does_not_fake_a_table_row(hostile: dict[str, Path]) -> None:
    result = _invoke(hostile, "runs")
    lines = result.stdout.splitlines()
    assert len(lines) == 1 + len(HOSTILE)  # the header and one line per run
    assert any(line.startswith("run-newlinefake␊row ") for line in lines)


def test_import_warnings_and_skipped_runs_are_shown_safely(tmp_path: Path) -> None:
    runs = hostile_runs()
    runs.append({"id": "broken\x1b]2;x\x07", "agents": [{"name": "x\u202e"}]})
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs), encoding="utf-8")
    db, config = tmp_path / "runs.db", tmp_path / "config.toml"
    result = CliRunner().invoke(
        cli, ["import", str(path), "--skip-invalid", "--db", str(db), "--config", str(config)]
    )
    assert result.exit_code == 0, result.output
    _assert_safe(result)
    assert "pref␛]52;c;SGVsbG8=␇" in result.stderr  # the unknown preference, visible
    assert "skipped invalid run" in result.stderr
    # Without --skip-invalid the whole import is refused, with one safe line.
    result = CliRunner().invoke(cli, ["import", str(path), "--db", str(tmp_path / "other.db")])
    assert result.exit_code == 1
    _assert_safe(result)


def test_prefer_echoes_hostile_names_safely(hostile: dict[str, Path], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    db.write_bytes(hostile["db"].read_bytes())
    paths = {**hostile, "db": db}
    result = _invoke(paths, "prefer", "run-clear\x1b[2J", "a\x1b[2J")
    assert result.exit_code == 0, result.output
    assert result.stdout == "run-clear␛[2J: tester's preferred agent is a␛[2J (was b␛[2J)\n"
    for key, text in HOSTILE.items():
        for args in ((f"a{text}",), ("--clear",)):
            result = _invoke(paths, "prefer", f"run-{key}{text}", *args)
            assert result.exit_code == 0, result.output
            _assert_safe(result)


@pytest.mark.parametrize(
    "command",
    [
        ("runs", "--json"),
        ("rank", "run-osc52\x1b]52;c;SGVsbG8=\x07", "--json"),
        ("regret", "--json"),
        ("tune", "--per-stage", "--json"),
        ("config", "show", "--json"),
        ("classify", "--json", "Which \x9b2J or \u202e?"),
        ("export", "--format", "json"),
    ],
    ids=lambda c: c[0],
)
def test_json_output_is_safe_and_exact(hostile: dict[str, Path], command: tuple[str, ...]) -> None:
    result = _invoke(hostile, *command)
    assert result.exit_code == 0, result.output
    _assert_safe(result)
    strings = list(_strings(json.loads(result.stdout)))
    # The hostile values come back exactly, escape sequences and all.
    assert any(value in string for value in HOSTILE.values() for string in strings)


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON document, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_json_values_round_trip_exactly(hostile: dict[str, Path]) -> None:
    rows = json.loads(_invoke(hostile, "runs", "--json").stdout)
    assert {row["id"] for row in rows} == {f"run-{k}{t}" for k, t in HOSTILE.items()}
    assert {row["stage"] for row in rows} == {f"st{t}" for t in HOSTILE.values()}
    assert {row["preferred"] for row in rows} == {f"b{t}" for t in HOSTILE.values()}
    ranked = json.loads(_invoke(hostile, "rank", "run-bidi\u202egnp.exe", "--json").stdout)
    assert {a["name"] for a in ranked["agents"]} == {"a\u202egnp.exe", "b\u202egnp.exe"}
    shown = json.loads(_invoke(hostile, "config", "show", "--json").stdout)
    assert set(shown["weights"]) >= {f"st{t}" for t in HOSTILE.values()}
    lines = _invoke(hostile, "score", str(hostile["runs"]), "--json").stdout.splitlines()
    assert [json.loads(line)["run_id"] for line in lines] == [r["id"] for r in hostile_runs()]
    questions = ["Which \x9b2J?", "Or \u202e\x1b]52;c;eA==\x07?"]
    classified = json.loads(_invoke(hostile, "classify", "--json", *questions).stdout)
    assert [c["question"] for c in classified] == questions


def test_export_csv_is_exact_in_a_pipe_and_safe_on_a_terminal(
    hostile: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    piped = _invoke(hostile, "export")
    assert piped.exit_code == 0, piped.output
    assert "run-osc52\x1b]52;c;SGVsbG8=\x07" in piped.stdout  # a pipe or file gets the data
    monkeypatch.setattr("ppp_tui.cli.import_export.is_terminal", lambda stream: True)
    shown = _invoke(hostile, "export")
    assert shown.exit_code == 0, shown.output
    _assert_safe(shown)
    assert "run-osc52␛]52;c;SGVsbG8=␇" in shown.stdout


def test_config_show_escapes_stage_names_as_toml_reads_them(hostile: dict[str, Path]) -> None:
    import tomllib

    result = _invoke(hostile, "config", "show")
    assert result.exit_code == 0, result.output
    _assert_safe(result)
    document = tomllib.loads(result.stdout)
    assert set(document["ppp"]["weights"]) >= {f"st{t}" for t in HOSTILE.values()}


def test_is_terminal_of_a_closed_or_odd_stream() -> None:
    import io

    stream = io.StringIO()
    assert not safe_text.is_terminal(stream)
    stream.close()
    assert not safe_text.is_terminal(stream)
