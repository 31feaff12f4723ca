"""How well the questions taken from agents' text match the questions a person sees
put to the user, over a folder of real session transcripts.

    python benchmarks/questions_realdata.py [--realdata FOLDER] [--labels FILE]
        [--save FILE] [--compare FILE] [--unlabelled]

Imports every transcript under FOLDER (by default ../shared/realdata/sessions beside the
repository) into a scratch database with `ppp-tui import`, reads every agent back with
`ppp-tui show --json`, and checks each question asked in text (not through the agent's
ask tool) against a file of labels a person made: whether it is a question really put
to the user (the agent hands control back for the answer and does not answer it itself),
and if not, what kind of text it is. Prints the share of reported text questions that
are real (precision) and the share of the real ones reported (recall), by kind.

Labels are keyed by session id, turn and a hash of the question's text, so the labels
file holds no text of the transcripts. A question the labels do not know is listed with
`--unlabelled` (to label it). `--save` writes each agent's R_Proact and questions to a
file; `--compare` an earlier such file prints the agents whose R_Proact changed most.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from _common import isolated_env, ppp_tui, scratch

HERE = Path(__file__).resolve().parent
DEFAULT_REALDATA = HERE.parent.parent / "shared" / "realdata" / "sessions"
DEFAULT_LABELS = HERE / "data" / "text_questions.json"


def question_key(session: str, turn: int, text: str) -> str:
    digest = hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:12]
    return f"{session}:{turn}:{digest}"


def _run(args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):  # 1: some files were not transcripts (warned)
        sys.exit(f"{' '.join(args[:3])}: exit {done.returncode}: {done.stderr.strip()[:300]}")
    return done.stdout


def agents_of(folder: Path) -> list[dict[str, Any]]:
    """Every agent imported from `folder`, with its run id, sessions and questions."""
    with scratch("ppp-questions-") as tmp:
        env = isolated_env(tmp)
        db = str(tmp / "sessions.db")
        _run([*ppp_tui(), "import", "--db", db, str(folder)], env)
        runs = json.loads(_run([*ppp_tui(), "runs", "--db", db, "--json"], env))
        agents = []
        for run in runs:
            shown = json.loads(_run([*ppp_tui(), "show", "--db", db, run["id"], "--json"], env))
            for agent in shown["agents"]:
                agents.append({"run": run["id"], **agent})
        return agents


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--realdata", type=Path, default=DEFAULT_REALDATA)
    parser.add_argument("--labels", type=Path, default=DEFAULT_LABELS)
    parser.add_argument("--save", type=Path)
    parser.add_argument("--compare", type=Path)
    parser.add_argument("--unlabelled", action="store_true")
    args = parser.parse_args()
    if not args.realdata.is_dir():
        sys.exit(f"{args.realdata}: no such folder (give --realdata)")
    labels: dict[str, dict[str, Any]] = json.loads(args.labels.read_text())
    agents = agents_of(args.realdata)

    reported = real = 0
    unknown: list[tuple[str, str]] = []
    wrong: Counter[str] = Counter()
    found_units: set[str] = set()
    saved: dict[str, Any] = {}
    for agent in agents:
        session = ",".join(agent["sessions"])
        texts = []
        for question in agent["questions"]:
            if question["asked_with"] == "tool":
                continue
            key = question_key(session, question["turn"], question["text"])
            texts.append(key)
            label = labels.get(key)
            if label is None:
                unknown.append((key, question["text"]))
                continue
            reported += 1
            if label["real"]:
                real += 1
                found_units.add(label.get("unit", key))
            else:
                wrong[label["kind"]] += 1
        saved[f"{agent['run']}/{agent['name']}"] = {"r_proact": agent["r_proact"], "text": texts}
    # Only the labels of the sessions read here count (a folder may hold some of them).
    seen = {",".join(agent["sessions"]) for agent in agents}
    units = {
        label.get("unit", key)
        for key, label in labels.items()
        if label["real"] and key.rsplit(":", 2)[0] in seen
    }
    print(f"agents: {len(agents)}; text questions reported: {reported + len(unknown)}")
    if reported:
        print(
            f"real questions to the user among those labelled: {real}/{reported}"
            f" = {real / reported:.1%} (precision)"
        )
    print(
        f"real questions found: {len(found_units & units)}/{len(units)}"
        f" = {len(found_units & units) / max(len(units), 1):.1%} (recall)"
    )
    for kind, count in wrong.most_common():
        print(f"  not a question to the user, reported: {count} {kind}")
    if unknown:
        print(f"unlabelled: {len(unknown)} (--unlabelled lists them)")
        if args.unlabelled:
            for key, text in unknown:
                print(f"  {key}  {text[:150]!r}")
    if args.save:
        args.save.write_text(json.dumps(saved, indent=1, sort_keys=True))
    if args.compare:
        before = json.loads(args.compare.read_text())
        changes = [
            (
                name,
                before[name]["r_proact"],
                now["r_proact"],
                len(before[name]["text"]),
                len(now["text"]),
            )
            for name, now in saved.items()
            if name in before and before[name]["r_proact"] != now["r_proact"]
        ]
        changes.sort(key=lambda c: -abs(c[2] - c[1]))
        print("R_Proact, before -> after (text questions before -> after), largest changes:")
        for name, old, new, n_old, n_new in changes[:10]:
            print(f"  {name}: {old:+.2f} -> {new:+.2f} ({n_old} -> {n_new})")


if __name__ == "__main__":
    main()
