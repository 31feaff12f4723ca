"""The documentation follows the program.

docs/json.md shows each `--json` document: its keys must be the real output's, and every
command with `--json` must be there. Nothing shipped (the package, README.md, docs/, the
help texts, the example config.toml) may name a document users do not have. Every page
of docs/ is in its index, and every relative link of the docs leads to a file.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from helpers import documented_shapes

from ppp_tui.cli import cli
from ppp_tui.storage.config_write import example_config

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

# Objects whose keys are data (stage or preference names): only their values' shapes count.
MAPS = {"regret.per_stage", "ab.per_stage", "config-show.weights", "config-show.penalties"} | {
    "agreement.per_stage",
    "show.marks",
}
# Objects that hold what the source had: their keys are among the documented ones.
OPEN = {"rank.consensus"}


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def _differences(documented: Any, actual: Any, path: str) -> Iterator[str]:
    """Where `actual` departs from the documented shape (`null` on either side: skipped)."""
    if documented is None or actual is None:
        return
    if _kind(documented) != _kind(actual):
        yield f"{path}: documented {_kind(documented)}, got {_kind(actual)}"
        return
    if isinstance(documented, dict):
        if path in MAPS:
            for key, value in actual.items():
                # A name not shown is checked against a shown value of the same kind.
                alike = (v for v in documented.values() if _kind(v) == _kind(value))
                expected = documented[key] if key in documented else next(alike, None)
                yield from _differences(expected, value, f"{path}[{key!r}]")
            return
        if path in OPEN:
            extra = set(actual) - set(documented)
            if extra:
                yield f"{path}: undocumented keys {sorted(extra)}"
        elif set(actual) != set(documented):
            missing, extra = set(documented) - set(actual), set(actual) - set(documented)
            yield (
                f"{path}: keys documented but absent {sorted(missing)},"
                f" undocumented {sorted(extra)}"
            )
        for key in set(actual) & set(documented):
            yield from _differences(documented[key], actual[key], f"{path}.{key}")
    elif isinstance(documented, list) and documented:
        for item in actual:
            yield from _differences(documented[0], item, f"{path}[]")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A demo database, the example spec-kit database imported beside it, config init'd."""
    folder = tmp_path_factory.mktemp("docs")
    where = {"db": str(folder / "runs.db"), "config": str(folder / "config.toml")}
    speckit = folder / "consensus.db"
    shutil.copyfile(ROOT / "examples" / "spec-kit-consensus.db", speckit)
    for args in (
        ["demo", "--runs", "60", "--seed", "3"],
        ["config", "init"],
        ["import", str(speckit)],
    ):
        _run(where, *args)
    return where


def _run(where: dict[str, str], *args: str) -> str:
    result = CliRunner().invoke(cli, [*args, "--db", where["db"], "--config", where["config"]])
    assert result.exit_code == 0, result.output
    return result.stdout


def _outputs(where: dict[str, str]) -> dict[str, Any]:
    runs = json.loads(_run(where, "runs", "--json"))
    marked_stage = next(r["stage"] for r in runs if r["preferred"] is not None and r["stage"])
    ranked = [
        json.loads(_run(where, "rank", r["id"], "--json"))
        for r in runs
        if r["id"].startswith("spec-kit-")
    ]
    spec_kit = next(d for d in ranked if d["consensus"] and len(d["agents"]) > 1)
    scored = _run(where, "score", str(ROOT / "examples" / "runs.jsonl"), "--json")
    return {
        "runs": runs,
        "rank": spec_kit,
        "score": [json.loads(line) for line in scored.splitlines()],
        "regret": json.loads(_run(where, "regret", "--json")),
        "tune": json.loads(_run(where, "tune", "--stage", marked_stage, "--json")),
        "tune --per-stage": json.loads(_run(where, "tune", "--per-stage", "--json")),
        "classify": json.loads(
            _run(where, "classify", "--json", "Which file? And should I add a test?")
        ),
        "config-show": json.loads(_run(where, "config", "show", "--json")),
        "export": json.loads(_run(where, "export", "--format", "json")),
        "show": json.loads(_run(where, "show", _asked_with_tool(runs), "--json")),
        "tune-inverse-error": json.loads(
            _run(where, "tune", "--method", "inverse-error", "--stage", marked_stage, "--json")
        ),
        "ab": json.loads(_run(where, "ab", "--json")),
        "next": json.loads(_run(where, "next", "--json")),
        "leaderboard": json.loads(_run(where, "leaderboard", "--json")),
        "agreement": json.loads(_run(where, "agreement", "--json")),
        "reviewers": json.loads(_run(where, "reviewers", "--json")),
        # Last: the judge relabels questions of the workspace's database.
        **_judge_outputs(where),
    }


def _judge_outputs(where: dict[str, str]) -> dict[str, Any]:
    """`judge --json` and `judge --evaluate --json` against a local endpoint."""
    from judge_server import serving

    with serving() as server:
        config = Path(where["config"]).with_name("judge.toml")
        config.write_text(
            f'[ppp.judge]\nbase_url = "{server.base_url}"\nmodel = "m"\n', encoding="utf-8"
        )
        judging = {**where, "config": str(config)}
        return {
            "judge": json.loads(_run(judging, "judge", "--technical", "--json")),
            "judge-evaluate": json.loads(_run(judging, "judge", "--evaluate", "--json")),
        }


def _asked_with_tool(runs: list[dict[str, Any]]) -> str:
    """The demo's marked run read from sessions (its agents asked through their tools)."""
    return str(next(r["id"] for r in runs if r["id"].startswith("session-") and r["preferred"]))


def test_every_documented_json_shape_is_the_real_output(workspace: dict[str, str]) -> None:
    shapes = documented_shapes()
    outputs = _outputs(workspace)
    assert set(shapes) == {name for name in outputs if " " not in name}
    problems = []
    for name, actual in outputs.items():
        if name == "score":  # JSON Lines of rank documents (rank's own keys: `flips`)
            problems += [p for line in actual for p in _differences(shapes["score"], line, name)]
        elif name == "tune --per-stage":  # a list of tune documents
            assert actual, "no stage with marked runs to tune"
            for document in actual:
                problems += _differences(shapes["tune"], document, "tune")
        else:
            problems += _differences(shapes[name], actual, name)
    assert not problems, "docs/json.md is out of date:\n" + "\n".join(problems)


def test_the_shape_check_sees_a_missing_or_an_extra_key() -> None:
    documented = {"a": 1, "list": [{"b": "x", "c": None}], "per_stage": {"s": {"d": 1}}}
    # Empty lists, null values and stages of other names pass; a stage's keys still count.
    same = {"a": 2, "list": [], "per_stage": {"t": {"d": None}}}
    assert not list(_differences(documented, same, "regret"))
    assert list(_differences(documented, {"a": 2, "list": [{"b": "y"}]}, "regret")) == [
        "regret: keys documented but absent ['per_stage'], undocumented []",
        "regret.list[]: keys documented but absent ['c'], undocumented []",
    ]
    wrong = {"a": "2", "list": [], "per_stage": {"t": {"e": 1}}}
    assert sorted(_differences(documented, wrong, "regret")) == [
        "regret.a: documented number, got str",
        "regret.per_stage['t']: keys documented but absent ['d'], undocumented ['e']",
    ]


def _commands(group: click.Group, prefix: str = "") -> Iterator[tuple[str, click.Command]]:
    context = click.Context(group)
    for name in group.list_commands(context):  # the top group imports its commands on use
        command = group.get_command(context, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", command


def test_every_command_with_json_has_its_section() -> None:
    text = (DOCS / "json.md").read_text(encoding="utf-8")
    with_json = [
        name
        for name, command in _commands(cli)
        if any("--json" in getattr(p, "opts", ()) for p in command.params)
    ]
    assert len(with_json) >= 7
    for name in with_json:
        assert f"## `ppp-tui {name} " in text, f"docs/json.md has no section for {name} --json"


# -- nothing shipped names a document users do not have --------------------------------

INTERNAL = re.compile(
    r"\bSPEC\b(?!-)"  # the product contract (a spec-kit id such as SPEC-KIT-001 is data)
    r"|\bADR\b"  # the design decision records
    r"|\bseeds?\s*#?\d{3}\b|\bthe seeds\b|\bseeds'"  # the research notes
    r"|\bissues?\s*#?\d+\b"  # the tracker's issues
    r"|\bsection\s+\d\b",  # the contract's sections
    re.IGNORECASE,
)


def _shipped_files() -> list[Path]:
    package = [p for p in (ROOT / "ppp_tui").rglob("*") if p.suffix in {".py", ".tcss", ".json"}]
    return [ROOT / "README.md", *DOCS.glob("*.md"), *package]


def _internal_references(text: str) -> list[str]:
    # SPEC in upper case only: "spec" is an ordinary word (a spec-kit spec).
    found = []
    for match in INTERNAL.finditer(text):
        word = match.group()
        if word.lower() == "spec" and word != "SPEC":
            continue
        found.append(word)
    return found


def test_the_pattern_finds_what_it_should() -> None:
    text = "see SPEC 7, seed 004, the seeds' stage weights, ADR-001-002, issue 12, section 4"
    assert len(_internal_references(text)) == 6
    clean = "spec SPEC-KIT-042, --seed 7, a spec's stage, the seed of the demo, ISSUES.md"
    assert _internal_references(clean) == []


def test_no_shipped_file_names_an_internal_document() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _shipped_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _internal_references(line)
    ]
    assert not found, "\n".join(found)


def test_no_help_text_or_example_config_names_an_internal_document() -> None:
    texts = {"config init": example_config()}
    runner = CliRunner()
    texts["ppp-tui"] = runner.invoke(cli, ["--help"]).output
    for name, _ in _commands(cli):
        result = runner.invoke(cli, [*name.split(), "--help"])
        assert result.exit_code == 0, result.output
        texts[name] = result.output
    found = {name: _internal_references(text) for name, text in texts.items()}
    assert not {name: words for name, words in found.items() if words}


# -- the docs hold together -------------------------------------------------------------

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_docs_index_lists_every_page_and_the_readme_points_to_it() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    pages = {p.name for p in DOCS.glob("*.md")} - {"README.md"}
    linked = set(LINK.findall(index))
    assert pages <= linked, f"docs/README.md does not list {sorted(pages - linked)}"
    assert "docs/README.md" in LINK.findall((ROOT / "README.md").read_text(encoding="utf-8"))


def test_every_relative_link_of_the_docs_leads_to_a_file() -> None:
    broken = []
    for page in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *DOCS.glob("*.md")]:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, broken
