"""Run ids on the command line: a unique prefix names its run, an ambiguous one lists the
runs it could be; a mistyped command is answered with the nearest ones."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from ppp_tui.cli import cli
from ppp_tui.storage.store import Store


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output
    return result


def test_a_unique_prefix_names_its_run_in_every_command(db: Path) -> None:
    whole = invoke("show", "demo-000042", "--db", str(db), "--json")
    assert whole.exit_code == 0
    short = invoke("show", "demo-00004", "--db", str(db), "--json")
    assert short.exit_code != 0  # demo-000040 ... demo-000049
    prefix = invoke("show", "demo-000042", "--db", str(db), "--json")
    assert json.loads(prefix.output)["run_id"] == "demo-000042"
    ranked = invoke("rank", "demo-0002", "--db", str(db), "--json")  # demo-000200 ... 299
    assert ranked.exit_code != 0
    ranked = invoke("rank", "demo-000299", "--db", str(db), "--json")
    assert ranked.exit_code == 0
    example = Path(__file__).parent.parent / "examples" / "runs.jsonl"
    run = json.loads(example.read_text().splitlines()[0])
    one = db.parent / "one.json"
    one.write_text(json.dumps(run | {"id": "only-one-of-its-kind"}))
    assert invoke("import", str(one), "--db", str(db)).exit_code == 0
    shown = invoke("show", "only", "--db", str(db), "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["run_id"] == "only-one-of-its-kind"
    run = json.loads(shown.output)
    agent = run["agents"][0]["name"]
    marked = invoke("prefer", "only-one", agent, "--db", str(db))
    assert marked.exit_code == 0, marked.output
    assert marked.output.startswith("only-one-of-its-kind: ")
    with Store.open(db) as store:
        assert store.current_marks("only-one-of-its-kind") == {"tester": agent}


def test_an_ambiguous_prefix_lists_the_runs_it_could_be(db: Path) -> None:
    result = invoke("show", "demo-00004", "--db", str(db))
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert line.startswith("Error: 'demo-00004' is the start of several run ids: demo-000040,")
    assert line.endswith(", …")  # ten runs: the first eight named
    assert line.count("demo-0000") == 9
    few = invoke("show", "demo-00004", "--db", str(db))
    assert few.output == result.output


def test_an_unknown_run_id_or_prefix_is_one_line(db: Path) -> None:
    for given in ("nope", "", "demo-0000429", "%", "demo_"):
        result = invoke("show", given, "--db", str(db))
        assert result.exit_code == 1
        assert result.output == f"Error: unknown run id {given!r}\n"


def test_a_mistyped_command_is_answered_with_the_nearest() -> None:
    result = invoke("imprt")
    assert result.exit_code == 2
    assert "No such command 'imprt'. Did you mean 'import'?" in result.output
    assert "Did you mean" not in invoke("zzzzzz").output
    hostile = invoke("imp\x1b[2Jrt")
    assert "\x1b" not in hostile.output and "Did you mean 'import'?" in hostile.output
