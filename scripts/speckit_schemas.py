"""Regenerate ppp_tui/storage/speckit_schemas.json from spec-kit's prompts.json.

Usage: python scripts/speckit_schemas.py PROMPTS_JSON COMMIT > ppp_tui/storage/speckit_schemas.json

Each spec-kit prompt ends with the JSON it asks the agent for; the fields kept are that
object's top-level keys, minus the envelope (stage, agent, model, ...), with one level of
nesting for object-valued keys (gpt_pro's `final_plan`).
"""

from __future__ import annotations

import json
import re
import sys

ENVELOPE = {"stage", "prompt_version", "agent", "model", "model_release", "reasoning_mode"}
_KEY = re.compile(r'^(\s*)"([A-Za-z_][A-Za-z0-9_]*)"\s*:\s*(.*)$')


def fields(prompt: str) -> list[str]:
    start = prompt.find('{\n  "stage"')
    if start < 0:
        start = prompt.find("{\n")
    if start < 0:
        return []
    out: list[str] = []
    parent: str | None = None
    for line in prompt[start:].splitlines()[1:]:
        if line.startswith("}"):
            break
        match = _KEY.match(line)
        if not match:
            continue
        indent, key, rest = len(match.group(1)), match.group(2), match.group(3)
        if indent <= 2:
            parent = key if rest.startswith("{") and not rest.rstrip(",").endswith("}") else None
            if key not in ENVELOPE:
                out.append(key)
        elif parent is not None and indent == 4:
            out.append(f"{parent}.{key}")
    return out


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        prompts = json.load(handle)
    stages: dict[str, object] = {}
    for stage, entry in prompts.items():
        if not isinstance(entry, dict) or stage in ("template_context",):
            continue
        agents = {}
        for agent, spec in entry.items():
            if isinstance(spec, dict) and isinstance(spec.get("prompt"), str):
                asked = fields(spec["prompt"])
                if asked:
                    agents[agent] = asked
        if agents:
            stages[stage] = {"version": entry.get("version"), "agents": agents}
    document = {
        "source": "theturtlecsz/code docs/spec-kit/prompts.json",
        "commit": sys.argv[2],
        "stages": stages,
    }
    json.dump(document, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
