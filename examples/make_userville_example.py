"""Build examples/userville-rollouts.jsonl: UserVille rollouts as the PPP paper's code holds them.

    python examples/make_userville_example.py [OUTPUT.jsonl]
    ppp-tui import --format userville examples/userville-rollouts.jsonl

The paper's environment (PPP-Agent, envs/userville.py) scores a session from three things:
the chat `messages` of the ReAct agent (system prompt, task prompt, then each response and
the observation that came back), the task's `extra_info` (its `preference`, as
{name: {"preference": ..., "reward": ...}}, and `is_vague`), and the `stats` its simulated
user's tags add up (`ask_turn`, `level_N`, `level_sum`, `reward_0`, ...), with the task
`score` before (`raw_score`) and after the interaction rewards. This script writes one such
rollout per line, with the `model` that produced it: the agents answer in the paper's tool
format (`<function=ask_question>` with a `query` parameter, reasoning written before the
call), the simulated user replies as its prompt asks (a short reply, then `[Cost N]`, then
`[Reward 0]` or `[Reward 1]` where the preference has a reward rule), and the stats and
scores are computed the way the environment computes them.

Three models on two tasks: a vague coding task under `one_question` (one model asks two
questions in one ask, which the user tags [Reward 0]; one thinks aloud with rhetorical
questions and asks once; one never asks), and a precise task under `answer_more`. The file
is the same on every run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SYSTEM = "You are OpenHands agent, a helpful AI assistant that can interact with a computer."
# Paraphrases of the preference texts the simulated user is given.
PREFERENCES = {
    "one_question": {
        "preference": "I want the agent to ask only one question each time.",
        "reward": "Give [Reward 0] if the agent asks more than one question at a time.",
    },
    "answer_more": {
        "preference": "I'm happy to answer many questions; ask me at least three times.",
        "reward": "[function] the session is scored by the number of asks.",
    },
}
LEVEL_COST = {1: 0.0, 2: 0.1, 3: 0.2, 4: 0.3, 5: 0.4}  # (level - 1) * 0.1 for vague prompts


def call(name: str, **parameters: str) -> str:
    body = "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in parameters.items())
    return f"<function={name}>\n{body}</function>"


def reply(text: str, cost: int, reward: int | None) -> str:
    tags = f"[Cost {cost}]" + ("" if reward is None else f"\n[Reward {reward}]")
    return f"{text}\n{tags}"


def stats_of(messages: list[dict[str, str]]) -> dict[str, int]:
    """The environment's tally: one ask per ask_question call, tags read from each reply."""
    stats = {"ask_turn": 0, "if_ask": 0, "level_sum": 0, "reward_0": 0, "reward_1": 0}
    stats.update({f"level_{n}": 0 for n in range(1, 6)})
    for i, message in enumerate(messages):
        if message["role"] != "assistant" or "<function=ask_question>" not in message["content"]:
            continue
        answer = messages[i + 1]["content"] if i + 1 < len(messages) else ""
        for level in range(1, 6):
            if f"[Cost {level}]" in answer:
                stats[f"level_{level}"] += 1
                stats["level_sum"] += level
                break
        stats["reward_0"] += "[Reward 0]" in answer
        stats["reward_1"] += "[Reward 1]" in answer
        stats["ask_turn"] += 1
        stats["if_ask"] = 1
    return stats


def rollout(
    model: str,
    instance: str,
    preference: str,
    vague: bool,
    prompt: str,
    steps: list[tuple[str, str]],
    raw_score: float,
) -> dict[str, Any]:
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
    for response, observation in steps:
        messages.append({"role": "assistant", "content": response})
        messages.append({"role": "user", "content": observation})
    stats: dict[str, Any] = stats_of(messages)
    stats["raw_score"] = raw_score
    return {
        "model": model,
        "instance_id": instance,
        "extra_info": {
            "instance_id": instance,
            "is_vague": vague,
            "preference": {preference: PREFERENCES[preference]},
        },
        "messages": messages,
        "score": ["", raw_score],
        "stats": stats,
    }


def build() -> list[dict[str, Any]]:
    vague = "The separability matrix looks wrong for nested models. Please fix it."
    edit = call("str_replace_editor", command="str_replace", path="/repo/separable.py")
    done = call("finish")
    return [
        rollout(
            "ppp-seed-oss-36b",
            "astropy__astropy-12907",
            "one_question",
            True,
            vague,
            [
                (
                    "Which models are nested? Is it the & operator? I should ask the user.\n"
                    + call("ask_question", query="Which model combination gives the wrong matrix?"),
                    reply("Pix2Sky_TAN with two Linear1D nested.", 1, 1),
                ),
                (edit, "The file has been edited."),
                (done, "Task finished"),
            ],
            1.0,
        ),
        rollout(
            "gpt-5",
            "astropy__astropy-12907",
            "one_question",
            True,
            vague,
            [
                (
                    call(
                        "ask_question",
                        query="Which models are nested? And which output do you expect?",
                    ),
                    reply("Pix2Sky_TAN and two Linear1D, should be diagonal.", 1, 0),
                ),
                (
                    call("ask_question", query="Which file holds the code"),
                    reply("It's astropy/modeling/separable.py.", 4, 1),
                ),
                (edit, "The file has been edited."),
                (done, "Task finished"),
            ],
            1.0,
        ),
        rollout(
            "seed-oss-36b",
            "astropy__astropy-12907",
            "one_question",
            True,
            vague,
            [(edit, "The file has been edited."), (done, "Task finished")],
            0.0,
        ),
        rollout(
            "ppp-seed-oss-36b",
            "django__django-11099",
            "answer_more",
            False,
            "UsernameValidator allows a trailing newline in usernames; use \\A and \\Z.",
            [
                (
                    call("ask_question", query="Both ASCII and Unicode validators?"),
                    reply("Yeah, both of them.", 1, None),
                ),
                (
                    call("ask_question", query="Keep the error message as it is\uff1f"),
                    reply("Sure, keep it.", 1, None),
                ),
                (
                    call("ask_question", query=""),
                    reply("I don't know what you mean.", 3, None),
                ),
                (edit, "The file has been edited."),
                (done, "Task finished"),
            ],
            1.0,
        ),
        rollout(
            "gpt-5",
            "django__django-11099",
            "answer_more",
            False,
            "UsernameValidator allows a trailing newline in usernames; use \\A and \\Z.",
            [(edit, "The file has been edited."), (done, "Task finished")],
            1.0,
        ),
    ]


def main(argv: list[str]) -> None:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).with_name("userville-rollouts.jsonl")
    lines = [json.dumps(item, ensure_ascii=False) for item in build()]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {out} ({len(lines)} rollouts)")


if __name__ == "__main__":
    main(sys.argv)
