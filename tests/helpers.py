"""Helpers shared by several test modules (fixtures stay in conftest.py)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from transcripts import TASK

if TYPE_CHECKING:
    from pathlib import Path

    from click.testing import Result
    from judge_server import Server
    from textual.pilot import Pilot

    from ppp_tui.app.app import PPPApp
    from ppp_tui.app.screens.recomputing import RecomputingScreen
    from ppp_tui.core.sessions.model import Session
    from ppp_tui.storage.location import ServerURL


# The keys of each agent in `rank --json` and `show --json` (docs/json.md).
AGENT_KEYS = frozenset(
    [
        "name",
        "rank",
        "technical",
        "technical_source",
        "r_proact",
        "r_pers",
        "interaction",
        "final",
        "has_trajectory",
        "questions",
        "violations",
        "failed",
        "failure",
    ]
)

# The keys of `rank --json` (with --flips, also "flips" and "regions").
RANK_KEYS = frozenset(
    [
        "run_id",
        "stage",
        "weights",
        "ppp_enabled",
        "best_agent",
        "confidence",
        "margin",
        "agents",
        "consensus",
    ]
)


def table_columns(conn: sqlite3.Connection) -> list[tuple[str, list[str]]]:
    """Each table of the SQLite database `conn`, by name, with the names of its columns."""
    names = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    return [
        (name, [row[1] for row in conn.execute(f'PRAGMA table_info("{name}")')])
        for (name,) in names.fetchall()
    ]


def table_rows(path: Path, leave_out: tuple[str, ...] = ()) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows of the database at `path`, sorted by all their columns,
    without the times of import and marking (which differ from one run to the next);
    tables whose names end with one of `leave_out` are left out."""
    conn = sqlite3.connect(path)
    try:
        tables = {}
        for name, every_column in table_columns(conn):
            if leave_out and name.endswith(leave_out):
                continue
            columns = [
                column for column in every_column if column not in ("imported_at", "marked_at")
            ]
            # Every column sorts: ids too, so each row keeps the one it was given.
            order = ", ".join(map(str, range(1, len(columns) + 1)))
            tables[name] = conn.execute(
                f"SELECT {', '.join(columns)} FROM {name} ORDER BY {order}"
            ).fetchall()
        return tables
    finally:
        conn.close()


SHAPE = re.compile(r"<!-- shape: (\S+) -->\n```json\n(.*?)\n```", re.DOTALL)


def documented_shapes() -> dict[str, Any]:
    """The `--json` documents docs/json.md shows, by the name in their shape marker."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "json.md").read_text("utf-8")
    shapes = {name: json.loads(body) for name, body in SHAPE.findall(text)}
    assert shapes, "docs/json.md has no <!-- shape: NAME --> blocks"
    return shapes


@asynccontextmanager
async def opened(
    db: Path | ServerURL, where: Path, size: tuple[int, int], notifications: bool = False
) -> AsyncIterator[tuple[PPPApp, Pilot[None]]]:
    """The app on `db` at `size`, every run loaded; `where` is its config.toml, or the
    folder that holds it."""
    from ppp_tui.app.app import PPPApp

    config = where if where.suffix == ".toml" else where / "config.toml"
    app = PPPApp(db, config)
    async with app.run_test(size=size, notifications=notifications) as pilot:
        await app.load_done.wait()
        await pilot.pause()
        yield app, pilot


ScreenT = TypeVar("ScreenT", bound="RecomputingScreen[Any, Any]")


async def computed(app: PPPApp, pilot: Pilot[None], kind: type[ScreenT]) -> ScreenT:
    """The screen on top, of `kind`, once the figures it computes are shown (at most 20 s)."""
    screen = app.screen
    assert isinstance(screen, kind), f"{type(screen).__name__} is on top, not {kind.__name__}"
    await pilot.pause()
    for _ in range(1000):
        if not screen.computing:
            break
        await app.workers.wait_for_complete()
        await pilot.pause(0.02)
    assert not screen.computing, f"{kind.__name__} still computing after 20 s"
    await pilot.pause()
    return screen


class HeldLoad(threading.Event):
    """Set it to let the app's whole-database load go on."""

    async def first_screen(self, app: PPPApp, pilot: Pilot[None]) -> None:
        """Wait for the app's first screen: the first page of runs, the load held."""
        while app.first_screen_seconds is None:
            await pilot.pause()

    @asynccontextmanager
    async def opened(
        self, db: Path, config: Path, size: tuple[int, int]
    ) -> AsyncIterator[tuple[PPPApp, Pilot[None]]]:
        """The app on `db` at `size`, on its first screen (`first_screen`)."""
        from ppp_tui.app.app import PPPApp

        app = PPPApp(db, config)
        async with app.run_test(size=size) as pilot:
            await self.first_screen(app, pilot)
            yield app, pilot


def session_run_db(db: Path, sessions: list[Session]) -> Path:
    """A new database at `db` holding one run, "session-run", of `sessions`."""
    from ppp_tui.core.sessions.grouping import agent_names, session_run
    from ppp_tui.storage.files import ParsedRecord
    from ppp_tui.storage.store import Store

    run = session_run(sessions, "session-run", agent_names(sessions), "key", None)
    with Store.open(db, create=True) as store:
        store.import_records([ParsedRecord("test", None, "$", None, parsed=run)])
    return db


def run_cli(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> Result:
    """`ppp-tui ARGS` (reading `input`) through click's runner: never a traceback, and an
    unexpected exception raised as itself."""
    from click.testing import CliRunner

    from ppp_tui.cli import cli

    result = CliRunner().invoke(cli, list(args), input=input, env=env)
    assert "Traceback" not in result.output
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def run_ok(*args: str) -> Result:
    """`run_cli(*args)`, which must succeed (its output shown where it does not)."""
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    return result


# -- hostile text ------------------------------------------------------------------

HOSTILE = {
    "osc52": "\x1b]52;c;SGVsbG8=\x07",
    "osc2": "\x1b]2;pwned\x07",
    "clear": "\x1b[2J",
    "csi8": "\x9b2J",
    "bidi": "\u202egnp.exe",
    "newline": "fake\nrow",
    "close": "[/]",
    "red": "[red]x[/red]",
    "bold": "[/bold]",
}
# What no terminal output may hold: C0 but tab and newline, DEL, C1, bidi controls.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def hostile_runs() -> list[dict[str, Any]]:
    """One run per hostile text, in every field a command may print."""
    runs = []
    for key, text in HOSTILE.items():
        runs.append(
            {
                "id": f"run-{key}{text}",
                "spec_id": f"spec{text}",
                "stage": f"st{text}",
                "task": f"task {text}",
                "created_at": "2025-11-16T10:00:00Z",
                "preferences": ["json", f"pref{text}"],
                "preferred_agent": f"b{text}",
                "agents": [
                    {
                        "name": f"a{text}",
                        "model": f"m{text}",
                        "technical_score": 0.8,
                        "trajectory": {
                            "turns": [{"prompt": f"p{text}", "response": f"r{text}?"}],
                            "questions": [{"text": f"Which {text}?", "turn": 1}],
                            "violations": [{"preference": f"pref{text}", "turn": 1}],
                        },
                    },
                    {"name": f"b{text}", "technical_score": 0.7, "output": f"out{text}"},
                ],
            }
        )
    return runs


def toml_key(key: str) -> str:
    """`key` as a quoted config.toml key."""
    return json.dumps(key)  # a TOML basic string: JSON's escapes are TOML's


# -- commands run as a user runs them, whatever they raise --------------------------

ESC = "\x1b"


def invoke(*args: str, input: str | bytes | None = None) -> Result:
    """`ppp-tui ARGS` through click's runner, whatever it raises (`clean_exit` checks)."""
    from click.testing import CliRunner

    from ppp_tui.cli import cli

    return CliRunner().invoke(cli, list(args), input=input)


def clean_exit(result: Result, code: int) -> None:
    """The command ended as it meant to: no traceback, no raw escape."""
    assert result.exit_code == code, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.output
    assert ESC not in result.output


# -- the judge ---------------------------------------------------------------------

SECRET = "sk-test-never-shown-4f1c9a"


def write_config(path: Path, server: Server | None, **keys: Any) -> Path:
    """A config.toml whose [ppp.judge] points at `server` (none without one)."""
    lines = ["[ppp]", "enabled = true"]
    if server is not None:
        values = {
            "base_url": server.base_url,
            "model": "judge-model",
            "concurrency": 1,
            "timeout_s": 5,
            **keys,
        }
        lines.append("[ppp.judge]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in values.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_judge(
    db: Path | str, config: Path, *args: str, env: dict[str, str] | None = None
) -> Result:
    """`ppp-tui judge ARGS` on `db` (a file or a server's URL) with `config`, through
    click's runner."""
    from click.testing import CliRunner

    from ppp_tui.cli import cli

    return CliRunner().invoke(
        cli, ["judge", *args, "--db", str(db), "--config", str(config)], env=env
    )


def judge_process(db: Path | str, config: Path, *args: str) -> subprocess.Popen[str]:
    """`ppp-tui judge ARGS` on `db` (a file or a server's URL) in a process of its own,
    its output read as text; no proxy, no key from the caller's environment."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.pop("OPENAI_API_KEY", None)
    return subprocess.Popen(
        [sys.executable, "-m", "ppp_tui", "judge", "--db", str(db), "--config", str(config), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def judged_together(db: Path | str, config: Path, runs: int = 2) -> list[dict[str, Any]]:
    """`runs` judge processes started at once on `db` (`judge_process`, `--json`), each
    run to its successful end: their documents."""
    processes = [judge_process(db, config, "--json") for _ in range(runs)]
    documents = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        documents.append(json.loads(out))
    return documents


def judged_while_another_asks(
    db: Path | str, config: Path, server: Server, meanwhile: Callable[[], object] = lambda: None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A judge run in a process of its own (`--json`) held by `server` once it has
    claimed its prompts and sent the first; meanwhile `meanwhile`, then a second run in
    this process. Both must succeed: their documents, the first's first."""
    server.hold = threading.Event()
    first = judge_process(db, config, "--json")
    try:
        wait_for(lambda: server.count >= 1)  # the first has claimed its prompts
        meanwhile()
        second = run_judge(db, config, "--json")
    finally:
        server.hold.set()
    out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert second.exit_code == 0, second.output
    return json.loads(out), json.loads(second.stdout)


def wait_for(condition: Callable[[], object], seconds: float = 30) -> None:
    """Until `condition()` holds (failing after `seconds`)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def one_line_error(result: Result) -> str:
    """The one line a command that failed wrote on standard error (exit 1, no
    traceback, nothing a terminal would act on)."""
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    assert not UNSAFE.search(result.stderr), result.stderr
    return lines[0]


def question_rows(db: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT id, trajectory_id, text, effort, source, judged_model, judged_prompt"
            " FROM trajectory_questions ORDER BY id"
        ).fetchall()
    finally:
        conn.close()


def classified_count(db: Path) -> int:
    return sum(1 for row in question_rows(db) if row[4] != "label")


def check_consistent(db: Path) -> None:
    """The agents' question counts are their questions', and every pack is what the
    agents give now (rank and regret read the packs)."""
    from ppp_tui.storage import packs

    conn = sqlite3.connect(db)
    try:
        counts = conn.execute(
            "SELECT a.id, a.q_low, a.q_medium, a.q_high,"
            " (SELECT count(*) FROM trajectory_questions q WHERE q.trajectory_id = a.id"
            "  AND q.effort = 'low'),"
            " (SELECT count(*) FROM trajectory_questions q WHERE q.trajectory_id = a.id"
            "  AND q.effort = 'medium'),"
            " (SELECT count(*) FROM trajectory_questions q WHERE q.trajectory_id = a.id"
            "  AND q.effort = 'high')"
            " FROM agents a JOIN trajectories t ON t.id = a.id"
        ).fetchall()
        assert counts
        for row in counts:
            assert row[1:4] == row[4:7], row
        stored = conn.execute("SELECT * FROM run_scores ORDER BY run_id").fetchall()
        fresh = packs.from_agent_rows(
            conn.execute(f"{packs.AGENT_ROWS} ORDER BY run_id, position").fetchall()
        )
        assert stored == [tuple(pack) for pack in fresh]
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == len(stored)
    finally:
        conn.close()


# -- a run of sessions whose agents edited files (the app's Changes tab) --------------

CHANGES_CWD = "/home/ana/shop"
EXPORT_BEFORE = "import json\n\n\ndef export(rows):\n    return rows\n"
EXPORT_AFTER = (
    "import json\n\n\ndef export(rows, as_json=False):\n"
    "    if as_json:\n        return json.dumps(rows)\n    return rows\n"
)
# A path and a line of code with markup and escape sequences (OSC 52 sets the clipboard).
HOSTILE_PATH = "notes/[b]evil[/b]\x1b]52;c;aGk=\x07.md"
HOSTILE_LINE = "[red]boom[/red] \x1b[2J\x1b]0;title\x07 \u202eevil"


def changes_db(path: Path) -> Path:
    """A database of one run of three sessions: claude-code edits app/export.py twice
    (in two turns) and writes app/cli.py; codex edits app/export.py once and the hostile
    path; gemini-cli edits nothing."""
    from ppp_tui.core.sessions.changes import EditKind, Piece, SessionEdit, diff_edit
    from ppp_tui.core.sessions.grouping import agent_names, session_run
    from ppp_tui.core.sessions.model import Session, SessionTurn, Step, StepKind, Tool
    from ppp_tui.storage.files import ParsedRecord
    from ppp_tui.storage.store import Store

    def edit(name: str, old: str, new: str, kind: EditKind = EditKind.UPDATE) -> SessionEdit:
        made = diff_edit(f"{CHANGES_CWD}/{name}", [Piece(old, new, 1, 1)], kind)
        assert made is not None
        return made

    halfway = EXPORT_AFTER.replace("        return json.dumps(rows)\n", "        pass\n")
    cli_text = "import click\n\n\n@click.command()\ndef main():\n    pass\n"

    def turn(prompt: str, minute: int, *edits: SessionEdit) -> SessionTurn:
        return SessionTurn(
            prompt=prompt,
            timestamp=f"2026-01-05T10:0{minute}:00Z",
            steps=[Step(StepKind.TEXT, "Done.")],
            edits=list(edits),
        )

    def session(tool: Tool, sid: str, started: str, *turns: SessionTurn) -> Session:
        return Session(
            tool, sid, f"/sessions/{sid}.jsonl", started=started, cwd=CHANGES_CWD, turns=list(turns)
        )

    sessions = [
        session(
            Tool.CLAUDE_CODE,
            "c1",
            "2026-01-05T10:00:00Z",
            turn(
                TASK,
                0,
                edit("app/export.py", EXPORT_BEFORE, halfway),
                edit("app/cli.py", "", cli_text, EditKind.CREATE),
            ),
            turn("and the JSON itself?", 2, edit("app/export.py", halfway, EXPORT_AFTER)),
        ),
        session(
            Tool.CODEX,
            "x1",
            "2026-01-05T10:01:00Z",
            turn(
                TASK,
                1,
                edit("app/export.py", EXPORT_BEFORE, EXPORT_AFTER),
                edit(HOSTILE_PATH, "# Notes\n", f"# Notes\n{HOSTILE_LINE}\n"),
            ),
        ),
        session(Tool.GEMINI_CLI, "g1", "2026-01-05T10:02:00Z", turn(TASK, 3)),
    ]
    run = session_run(sessions, "session-changes", agent_names(sessions), "key", None)
    with Store.open(path, create=True) as store:
        store.import_records([ParsedRecord("test", None, "$", None, parsed=run)])
    return path


# -- stores of either engine ----------------------------------------------------


def _agent_keys(conn: Any) -> dict[int, tuple[str, str]]:
    return {row[0]: (row[1], row[2]) for row in conn.execute("SELECT id, run_id, name FROM agents")}


def dump(conn: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows of a SQLite or PostgreSQL connection, agent ids as (run id,
    agent name) and the ids a copy's target gives left out, sorted: equal for two stores
    holding the same runs."""
    from ppp_tui.storage import transfer
    from ppp_tui.storage.tables import TABLES

    agents = _agent_keys(conn)
    tables: dict[str, list[tuple[Any, ...]]] = {}
    for table in TABLES:
        if table.name in ("judge_claims", "score_changes"):
            continue
        names = list(table.column_names)
        rows = conn.execute(f"SELECT {', '.join(names)} FROM {table.name}").fetchall()
        kept = []
        for row in rows:
            values = dict(zip(names, row, strict=True))
            if table.name in transfer._OWN_IDS:
                del values["id"]
            column = transfer._AGENT_ID.get(table.name)
            if column is not None:
                values[column] = agents[values[column]]
            kept.append(tuple(json.dumps(v, default=bytes.hex) for v in values.values()))
        tables[table.name] = sorted(kept)
    return tables
