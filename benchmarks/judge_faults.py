"""A fault pass of `ppp-tui judge`: endpoints that misbehave, and what the command does.

Each case starts the tests' chat-completions server (tests/judge_server.py) with one
fault, runs `ppp-tui judge --limit 1` on a copy of a small demo database as a process
(`timeout_s = 5`, the key in an environment variable), and watches it: its exit code,
its seconds (killed after `--wall` seconds: "hung"), its peak memory (killed past
`--memory-mb`), a traceback, more than one line on standard error, and whether the
key (or a password in base_url), or 8 characters of it in a row, shows in its output or
in any file of the database. Prints one row per case, then the totals.

    python benchmarks/judge_faults.py                   # every case (a minute or two)
    python benchmarks/judge_faults.py --only deep-200,echo-key-401
"""

from __future__ import annotations

import argparse
import secrets
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from _common import isolated_env, ppp_tui, scratch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from judge_server import Server, bomb, serving

# (case, fault sent to the first request, where the secret goes: "key" or "url")
CASES: list[tuple[str, str, str]] = [
    ("echo-key-401", "echo-key-401", "key"),
    ("echo-key-reason", "echo-key-reason", "key"),
    ("echo-key-400", "echo-key-400", "key"),
    ("echo-key-500", "echo-key-500", "key"),
    ("echo-key-200", "echo-key-200", "key"),
    ("echo-key-answer", "echo-key-answer", "key"),
    ("echo-url-password", "echo-key-401", "url"),
    ("config-show-url-password", "", "url"),
    ("endless", "endless", "key"),
    ("endless-close", "endless-close", "key"),
    ("trickle", "trickle", "key"),
    ("trickle-status", "trickle-status", "key"),
    ("huge-length", "huge-length", "key"),
    ("gzip-bomb", "gzip-bomb", "key"),
    ("deep-200", "deep-200", "key"),
    ("deep-401", "deep-401", "key"),
    ("deep-500", "deep-500", "key"),
    ("bignum-200", "bignum-200", "key"),
    ("bignum-401", "bignum-401", "key"),
    ("bignum-500", "bignum-500", "key"),
    ("context", "context", "key"),
    ("length", "length", "key"),
]


@dataclass
class Outcome:
    case: str
    exit: int | None  # None: killed
    seconds: float
    peak_mb: float
    traceback: bool
    lines: int  # on standard error
    shown: bool  # the secret in the output or the database
    note: str  # the last line on standard error
    output: str = ""  # standard output and error


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def leaks(secret: str, data: str) -> bool:
    """Whether `data` holds `secret` or 8 characters of it in a row."""
    return any(secret[i : i + 8] in data for i in range(max(1, len(secret) - 7)))


def run_case(
    folder: Path, template: Path, case: str, fault: str, where: str, args: argparse.Namespace
) -> Outcome:
    key = "sk-fault-" + secrets.token_urlsafe(30)
    password = "pw-" + secrets.token_urlsafe(20)
    secret = key if where == "key" else password
    work = folder / case
    work.mkdir()
    db = work / "runs.db"
    shutil.copyfile(template, db)
    server = Server(trickle_s=1.0, bomb_mb=args.bomb_mb)
    # A 5xx is tried again, as is a timeout: the fault lasts every try.
    tries = 5 if fault.endswith("-500") else 3 if fault.startswith("trickle") else 1
    server.faults = [fault] * tries if fault else []
    server.answer = lambda messages: "LOW, MEDIUM" if fault == "length" else "MEDIUM"
    with serving(server):
        url = server.base_url
        if where == "url":
            url = url.replace("http://", f"http://judge:{password}@")
        config = work / "config.toml"
        config.write_text(
            "[ppp.judge]\n"
            f'base_url = "{url}"\nmodel = "judge-model"\napi_key_env = "FAULT_KEY"\n'
            "concurrency = 1\ntimeout_s = 5\n",
            encoding="utf-8",
        )
        env = {**isolated_env(work), "FAULT_KEY": key}
        if case.startswith("config-show"):
            commands = [["config", "show"], ["config", "show", "--json"]]
        else:
            commands = [["judge", "--limit", "1", "--db", str(db)]]
        outcome = Outcome(case, 0, 0.0, 0.0, False, 0, False, "")
        for command in commands:
            one = watch([*ppp_tui(), *command, "--config", str(config)], env, work, args)
            outcome.exit = one.exit if outcome.exit == 0 else outcome.exit
            outcome.seconds += one.seconds
            outcome.peak_mb = max(outcome.peak_mb, one.peak_mb)
            outcome.traceback |= one.traceback
            outcome.lines = max(outcome.lines, one.lines)
            outcome.shown |= leaks(secret, one.output)
            outcome.note = outcome.note or one.note
    for path in work.iterdir():
        if path.is_file() and leaks(secret, path.read_bytes().decode("latin-1")):
            outcome.shown |= path.name != "config.toml"
    for fragment in (secret[i : i + 8] for i in range(len(secret) - 7)):
        outcome.note = outcome.note.replace(fragment, "<SECRET>")  # never printed here
    return outcome


def watch(command: list[str], env: dict[str, str], work: Path, args: argparse.Namespace) -> Outcome:
    out, err = work / "stdout", work / "stderr"
    start = time.monotonic()
    peak = 0.0
    killed = False
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=env, cwd=work)
        while process.poll() is None:
            peak = max(peak, rss_mb(process.pid))
            if peak > args.memory_mb or time.monotonic() - start > args.wall:
                process.kill()
                killed = True
                process.wait()
                break
            time.sleep(0.02)
    seconds = time.monotonic() - start
    text = err.read_text(encoding="utf-8", errors="replace")
    lines = [line for line in text.splitlines() if line.strip()]
    note = lines[-1][:140] if lines else ""
    if killed:
        note = f"killed: {'over the memory cap' if peak > args.memory_mb else 'hung'}"
    return Outcome(
        "",
        None if killed else process.returncode,
        seconds,
        peak,
        "Traceback" in text,
        len(lines),
        False,
        note,
        out.read_text(encoding="utf-8", errors="replace") + text,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated case names")
    parser.add_argument("--wall", type=float, default=60.0, help="seconds before a kill")
    parser.add_argument("--memory-mb", type=float, default=2048.0, help="memory before a kill")
    parser.add_argument("--bomb-mb", type=int, default=1024, help="a gzip bomb's inflated MB")
    args = parser.parse_args()
    wanted = set(args.only.split(",")) if args.only else None
    cases = [case for case in CASES if wanted is None or case[0] in wanted]
    with scratch("ppp-judge-faults-") as folder:
        template = folder / "demo.db"
        subprocess.run(
            [*ppp_tui(), "demo", "--db", str(template), "--runs", "20", "--seed", "3"],
            check=True,
            capture_output=True,
            env=isolated_env(folder),
        )
        if any(fault == "gzip-bomb" for _, fault, _ in cases):
            bomb(args.bomb_mb)  # made before the clock of its case starts
        outcomes = []
        print(f"{'case':<26}{'exit':>5}{'s':>7}{'MB':>7}  tb  lines shown  last line")
        for case, fault, where in cases:
            outcome = run_case(folder, template, case, fault, where, args)
            outcomes.append(outcome)
            note = outcome.note
            print(
                f"{case:<26}{'kill' if outcome.exit is None else outcome.exit:>5}"
                f"{outcome.seconds:>7.1f}{outcome.peak_mb:>7.0f}"
                f"  {'yes' if outcome.traceback else 'no':<4}"
                f"{outcome.lines:>5} {'YES' if outcome.shown else 'no':>5}  {note[:90]!r}"
            )
    over = sum(o.peak_mb > args.memory_mb for o in outcomes)
    hung = sum(o.exit is None and o.peak_mb <= args.memory_mb for o in outcomes)
    print(
        f"\n{len(outcomes)} replies tried: {sum(o.traceback for o in outcomes)} tracebacks,"
        f" {over} over {args.memory_mb:g} MB, {hung} hung past {args.wall:g} s,"
        f" {sum(o.shown for o in outcomes)} secrets shown,"
        f" {sum(o.exit not in (0, 1) for o in outcomes)} exits other than 0 or 1,"
        f" {sum(o.lines > 1 for o in outcomes)} with more than one line on standard error"
    )


if __name__ == "__main__":
    main()
