"""A session of thousands of edits: its run's Changes tab in the app, and `ppp-tui diff`.

    python benchmarks/bench_changes.py [--edits 5000] [--files 250] [--repeat 3]

Writes a Claude Code transcript of `--edits` edits of `--files` files (each an Edit tool
call and its result with the file's text before and its structuredPatch, as Claude Code
writes them; a third of the files written new first), imports it with `ppp-tui import`,
then prints, each the best and the worst of `--repeat` times (target: within a second):
- the app, headless at 200x50: opening the run (its screen composed with the Changes
  tab, which reads the changed files from the store's index), and the same without the
  tab, for what the rest of the screen costs (reading and laying out the session's
  conversation); then showing the Changes tab until it is drawn (the files table, the
  first file's diffs);
- moving the cursor to the next file and to the next agent's cell, each until drawn;
- `ppp-tui diff RUN_ID` as a whole process, its output written to a file.
Everything is written to a temporary folder that is removed at the end. A quick check
that it works: --edits 200 --repeat 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _common import isolated_env, ppp_tui, scratch
from textual.pilot import Pilot

from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens import run as run_screen
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.widgets.changes import ChangesPanel
from ppp_tui.app.widgets.diff_view import DiffView

CWD = "/home/dev/shop-api"
SIZE = (200, 50)
LINES = 60  # lines of each file


def _source(index: int) -> list[str]:
    """A Python module of LINES lines."""
    return [f"def handler_{index}_{n}(request):  # step {n}" for n in range(LINES)]


def _patch(before: list[str], at: int, old: str, new: str) -> list[dict[str, Any]]:
    """Claude Code's structuredPatch of one replaced line: one hunk, 3 lines of context."""
    start, end = max(at - 3, 0), min(at + 4, len(before))
    lines = [f" {line}" for line in before[start:at]]
    lines += [f"-{old}", f"+{new}"]
    lines += [f" {line}" for line in before[at + 1 : end]]
    count = end - start
    return [
        {"oldStart": start + 1, "oldLines": count, "newStart": start + 1, "newLines": count}
        | {"lines": lines}
    ]


def transcript(edits: int, files: int) -> Iterator[dict[str, Any]]:
    """A Claude Code session of `edits` edits of `files` files, line by line."""
    base = {"sessionId": "5e1f0c2a-bench", "cwd": CWD, "version": "2.1.30", "gitBranch": "main"}
    texts = {i: _source(i) for i in range(files)}
    n = 0

    def line(kind: str, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
        nonlocal n
        n += 1
        stamp = f"2026-03-02T{10 + n // 3600 % 12:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
        return {**base, "type": kind, "uuid": f"u{n}", "timestamp": stamp, "message": message}

    def call(tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        tool_id = f"toolu_{n}"
        block = {"type": "tool_use", "id": tool_id, "name": tool, "input": args}
        message = {"id": f"msg_{n}", "role": "assistant", "model": "claude-opus-4-5"}
        return tool_id, line("assistant", message | {"content": [block]})

    def result(tool_id: str, text: str, outcome: dict[str, Any]) -> dict[str, Any]:
        block = {"type": "tool_result", "tool_use_id": tool_id, "content": text}
        return line("user", {"role": "user", "content": [block]}) | {"toolUseResult": outcome}

    yield line("user", {"role": "user", "content": "Rename the handlers' steps, file by file."})
    for k in range(edits):
        index = k % files
        path = f"{CWD}/app/handlers/h{index:04d}.py"
        if k < files and index % 3 == 0:  # a new file: written whole
            content = "\n".join(texts[index]) + "\n"
            tool_id, called = call("Write", {"file_path": path, "content": content})
            yield called
            yield result(
                tool_id,
                f"File created successfully at: {path}",
                {"type": "create", "filePath": path, "content": content}
                | {"structuredPatch": [], "originalFile": None},
            )
            continue
        before = texts[index]
        at = k * 7 % LINES
        old, new = before[at], f"{before[at]} v{k}"
        args = {"file_path": path, "old_string": old, "new_string": new, "replace_all": False}
        tool_id, called = call("Edit", args)
        yield called
        yield result(
            tool_id,
            f"The file {path} has been updated.",
            {"filePath": path, "oldString": old, "newString": new}
            | {
                "originalFile": "\n".join(before) + "\n",
                "structuredPatch": _patch(before, at, old, new),
            }
            | {"userModified": False, "replaceAll": False},
        )
        texts[index] = [*before[:at], new, *before[at + 1 :]]
    yield line("assistant", {"role": "assistant", "content": [{"type": "text", "text": "Done."}]})


async def _until(condition: Any, limit: float = 60.0) -> None:
    deadline = time.perf_counter() + limit
    while not condition():
        if time.perf_counter() > deadline:
            raise SystemExit("bench_changes: the app did not get there in time")
        await asyncio.sleep(0.001)


async def _open_run(app: PPPApp, pilot: Pilot[None]) -> float:
    """Seconds from enter on the loaded runs list to the run's screen drawn."""
    await app.load_done.wait()
    await pilot.pause()
    start = time.perf_counter()
    await pilot.press("enter")
    await _until(lambda: isinstance(app.screen, RunScreen))
    await pilot.pause()
    return time.perf_counter() - start


async def without_tab(db: Path, config: Path) -> float:
    """Opening the run as if its agents had edited nothing: no Changes tab (the part of
    opening the run that is not the tab's)."""
    made = run_screen.changes_panel
    run_screen.changes_panel = lambda store, run: None  # type: ignore[assignment]
    try:
        app = PPPApp(db, config)
        async with app.run_test(size=SIZE) as pilot:
            return await _open_run(app, pilot)
    finally:
        run_screen.changes_panel = made


async def app_times(db: Path, config: Path) -> dict[str, float]:
    """One pass in the app: opening the run, its Changes tab, a step to the next file and
    to the next agent's cell, each until its frame is drawn."""
    app = PPPApp(db, config)
    times: dict[str, float] = {}
    async with app.run_test(size=SIZE) as pilot:
        times["open the run"] = await _open_run(app, pilot)
        screen = app.screen
        start = time.perf_counter()
        screen.query_one("#detail").active = "tab-changes"  # type: ignore[attr-defined]
        panel = screen.query_one(ChangesPanel)
        await _until(lambda: panel.shown is not None and panel.display)
        await pilot.pause()
        times["show the Changes tab"] = time.perf_counter() - start
        screen.query_one("#changed-files").focus()
        for key, name in (("down", "next file"), ("right", "next agent's cell")):
            before = panel.shown
            start = time.perf_counter()
            await pilot.press(key)
            await _until(lambda before=before: panel.shown != before)
            await pilot.pause()
            times[name] = time.perf_counter() - start
        rows = len(screen.query_one(DiffView).rows)
        times["diff rows"] = rows
    times["open the run, no tab"] = await without_tab(db, config)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=5000)
    parser.add_argument("--files", type=int, default=250)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with scratch("ppp-bench-changes-") as folder:
        env = isolated_env(folder)
        source = folder / "session.jsonl"
        with source.open("w", encoding="utf-8") as out:
            for row in transcript(args.edits, min(args.files, args.edits)):
                out.write(json.dumps(row) + "\n")
        size = source.stat().st_size / 1e6
        db, config = Path(env["PPP_TUI_DB"]), Path(env["PPP_TUI_CONFIG"])
        start = time.perf_counter()
        subprocess.run(
            [*ppp_tui(), "import", str(source)], env=env, check=True, capture_output=True
        )
        print(
            f"session: {args.edits:,} edits of {min(args.files, args.edits):,} files,"
            f" {size:.1f} MB; imported in {time.perf_counter() - start:.2f} s"
        )
        runs = json.loads(
            subprocess.run(
                [*ppp_tui(), "runs", "--json"], env=env, check=True, capture_output=True
            ).stdout
        )
        run_id = runs[0]["id"]
        found: dict[str, list[float]] = {}
        for _ in range(args.repeat):
            for name, value in asyncio.run(app_times(db, config)).items():
                found.setdefault(name, []).append(value)
            output = folder / "diff.txt"
            start = time.perf_counter()
            with output.open("w", encoding="utf-8") as out:
                subprocess.run([*ppp_tui(), "diff", run_id], env=env, check=True, stdout=out)
            found.setdefault("ppp-tui diff (process)", []).append(time.perf_counter() - start)
        rows = found.pop("diff rows")
        megabytes = output.stat().st_size / 1e6
        print(f"the first file's diff: {int(rows[0]):,} rows; `ppp-tui diff`: {megabytes:.1f} MB")
        for name, values in found.items():
            best, worst = min(values) * 1000, max(values) * 1000
            print(f"  {name:<26} best {best:7.1f} ms   worst {worst:7.1f} ms")


if __name__ == "__main__":
    main()
