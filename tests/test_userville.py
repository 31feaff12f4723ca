"""The paper's rollouts (`--format userville`) and agreement with the paper's reward code.

The oracle re-implements, from the paper's code (envs/userville.py), how a session is
tallied (one ask per ask_question call, the first call of a response only) and the reward
functions of the four preferences it computes from the whole session. Generated sessions go
through ppp-tui's import path three ways: as the paper's rollouts, as the import format with
the agent's whole text per turn (thinking, rhetorical questions and the tool call written
in it), and as the import format with the tool calls given apart from the text.
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ppp_tui.cli import cli
from ppp_tui.core.model import Effort, Source
from ppp_tui.core.runs import run_from_dict
from ppp_tui.storage.userville import runs_from_rollouts

ROOT = Path(__file__).parent.parent
EXAMPLE = ROOT / "examples" / "userville-rollouts.jsonl"
COMPUTED = ("no_ask", "only_begin", "ask_many", "answer_more")
MIN_AGREEMENT = 0.98


def _load_generator() -> Any:
    spec = importlib.util.spec_from_file_location(
        "make_userville_example", ROOT / "examples" / "make_userville_example.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


GEN = _load_generator()


# --- The oracle: the paper's tally and reward functions --------------------------------------

_CALL = re.compile(r"(?m)^[ \t]*<function=([^>]+)>\s*(.*?)\s*</function>", re.DOTALL)


def _first_function(text: str) -> str | None:
    # extract_fn_call: the text after the last <[...]> marker, calls at line starts, and the
    # environment runs the first of the last group.
    text = re.split(r"<\[[^\]]+\]>", text)[-1].strip()
    matches = list(_CALL.finditer(text))
    if not matches:
        return None
    groups = [[matches[0]]]
    for m in matches[1:]:
        gap = text.count("\n", groups[-1][-1].end(), m.start())
        groups[-1].append(m) if gap < 4 else groups.append([m])
    return groups[-1][0].group(1)


def paper_reward(preference: str, messages: list[dict[str, str]]) -> float:
    ask_turn = sum(
        1
        for m in messages
        if m["role"] == "assistant" and _first_function(m["content"]) == "ask_question"
    )
    if preference == "no_ask":
        return -int(ask_turn > 0)
    if preference == "only_begin":
        return -int("ask_question" in str(messages[3:]))
    if preference == "ask_many":
        return -int(ask_turn > 1)
    if preference == "answer_more":
        return min(1 * (ask_turn - 3), 0)
    raise ValueError(preference)


# --- The generator ---------------------------------------------------------------------------

RHETORICAL = [
    "Why would the matrix be diagonal here? Maybe the & operator.",
    "Is it the parser? Probably not.",
    "What does _cstack do with nested models? Let me look.",
    "Hmm, where is this defined?",
]
ASKS = [
    "Which model combination fails?",
    "Please tell me the expected output",  # a request, no question mark
    "",  # an empty ask
    "要修改哪个文件\uff1f",  # full-width
    "Should I keep the old behaviour for flat models? And add a test?",
    "Confermi?",
]
TOOLS = [
    GEN.call("execute_bash", command="grep -rn separability /repo"),
    GEN.call("str_replace_editor", command="view", path="/repo/separable.py"),
]


def _response(rng: random.Random, asking: bool, mention: bool) -> str:
    parts = []
    if rng.random() < 0.3:
        parts.append(f"<think>{rng.choice(RHETORICAL)} {rng.choice(RHETORICAL)}</think>")
    if rng.random() < 0.6:
        parts.append(rng.choice(RHETORICAL))
    if mention:  # the agent names the tool without calling it
        parts.append("I could use ask_question, but the code should tell me.")
    if asking:
        parts.append(GEN.call("ask_question", query=rng.choice(ASKS)))
    else:
        parts.append(rng.choice(TOOLS))
    return "\n".join(parts)


def generate(preference: str, seed: int) -> tuple[dict[str, Any], bool]:
    """One session and whether it shows the paper's substring artefact."""
    rng = random.Random(seed)
    steps = []
    artefact = False
    for turn in range(rng.randint(0, 6)):
        asking = rng.random() < 0.45
        mention = not asking and rng.random() < 0.05
        artefact |= mention and turn >= 1
        observation = (
            GEN.reply("Yeah, the nested one.", rng.choice([1, 2, 3, 4, 5]), None)
            if asking
            else "OBSERVATION: ok"
        )
        steps.append((_response(rng, asking, mention), observation))
    if steps or rng.random() < 0.5:
        steps.append((GEN.call("finish"), "Task finished"))
    rollout = GEN.rollout("model", f"task-{seed}", "answer_more", True, "Fix it.", steps, 1.0)
    rollout["extra_info"]["preference"] = {preference: {"preference": "-", "reward": "None"}}
    return rollout, artefact


def _violations(run: dict[str, Any]) -> int:
    trajectory = run_from_dict(run).agents[0].trajectory
    assert trajectory is not None
    return len(trajectory.violations)


def _as_rollouts(rollout: dict[str, Any]) -> int:
    (record,) = runs_from_rollouts("gen", json.dumps(rollout))
    return _violations(record.raw)


def _as_text(rollout: dict[str, Any], preference: str) -> int:
    turns = [{"response": m["content"]} for m in rollout["messages"] if m["role"] == "assistant"]
    run = {
        "preferences": [preference],
        "agents": [{"name": "a", "technical_score": 1, "trajectory": {"turns": turns}}],
    }
    return _violations(run)


def _as_tool_calls(rollout: dict[str, Any], preference: str) -> int:
    turns = []
    for message in rollout["messages"]:
        if message["role"] != "assistant":
            continue
        text = message["content"]
        calls = []
        match = re.search(r"<function=([^>]+)>(.*?)</function>", text, re.DOTALL)
        if match:
            arguments = dict(re.findall(r"<parameter=([^>]+)>(.*?)</parameter>", match.group(2)))
            calls.append({"name": match.group(1), "arguments": arguments})
        turns.append({"response": text[: match.start()] if match else text, "tool_calls": calls})
    run = {
        "preferences": [preference],
        "agents": [{"name": "a", "technical_score": 1, "trajectory": {"turns": turns}}],
    }
    return _violations(run)


@pytest.mark.parametrize("preference", COMPUTED)
def test_the_four_computed_preferences_agree_with_the_papers_code(preference: str) -> None:
    decided = 0
    agree = {"rollouts": 0, "text": 0, "tool_calls": 0}
    artefacts = 0
    for seed in range(300):
        rollout, artefact = generate(preference, seed)
        if artefact and preference == "only_begin":
            artefacts += 1  # the paper's code counts a mere mention of the tool's name
            continue
        expected = -paper_reward(preference, rollout["messages"])
        decided += 1
        agree["rollouts"] += _as_rollouts(rollout) == expected
        agree["text"] += _as_text(rollout, preference) == expected
        agree["tool_calls"] += _as_tool_calls(rollout, preference) == expected
    assert decided >= 280
    for path, count in agree.items():
        assert count / decided >= MIN_AGREEMENT, (preference, path, count, decided)
    if preference == "only_begin":
        assert artefacts > 0  # the generator does exercise the artefact


def test_the_artefact_the_agreement_leaves_aside() -> None:
    """The paper's only_begin looks for the string 'ask_question' anywhere after the first
    response, so a later mention of the tool without a call costs -1; ppp-tui looks at asks."""
    steps = [
        (
            GEN.call("ask_question", query="Which model fails?"),
            GEN.reply("The nested one.", 1, None),
        ),
        ("I could use ask_question again, but no.\n" + TOOLS[0], "OBSERVATION: ok"),
    ]
    rollout = GEN.rollout("m", "t", "answer_more", True, "Fix it.", steps, 1.0)
    rollout["extra_info"]["preference"] = {"only_begin": {"preference": "-", "reward": "None"}}
    assert paper_reward("only_begin", rollout["messages"]) == -1
    assert _as_rollouts(rollout) == 0


def test_thinking_aloud_is_not_asking() -> None:
    """The paper's figure: five rhetorical questions while thinking, one ask."""
    response = (
        "<think>Why is the matrix not diagonal? Is it the & operator?</think>\n"
        "What does _cstack do? Does _separable recurse? Is Mapping involved?\n"
        + GEN.call("ask_question", query="Which model combination gives the wrong matrix?")
    )
    run = {
        "preferences": ["one_question"],
        "agents": [
            {"name": "a", "technical_score": 1, "trajectory": {"turns": [{"response": response}]}}
        ],
    }
    trajectory = run_from_dict(run).agents[0].trajectory
    assert trajectory is not None
    assert [q.text for q in trajectory.questions] == [
        "Which model combination gives the wrong matrix?"
    ]
    assert trajectory.violations == ()


def test_no_turns_is_still_checked() -> None:
    """The paper gives answer_more -3 to a session without asks; ppp-tui three violations."""
    run = {
        "preferences": ["answer_more"],
        "agents": [{"name": "a", "technical_score": 1, "trajectory": {"turns": []}}],
    }
    trajectory = run_from_dict(run).agents[0].trajectory
    assert trajectory is not None
    assert len(trajectory.violations) == 3


def test_declared_asks_are_the_only_questions() -> None:
    turns = [
        {"response": "Is it the parser? Why?", "asks": ["Please share the traceback", ""]},
        {"response": "Which file? I wonder.", "asks": []},
        {
            "response": "Hmm?",
            "tool_calls": [
                {
                    "name": "AskUserQuestion",
                    "arguments": {
                        "questions": [
                            {
                                "question": "Which database?",
                                "options": [{"label": "PostgreSQL"}, {"label": "MySQL"}],
                            }
                        ]
                    },
                },
                {"name": "execute_bash", "arguments": {"command": "ls"}},
            ],
        },
    ]
    run = {
        "preferences": ["do_selection"],
        "agents": [{"name": "a", "technical_score": 1, "trajectory": {"turns": turns}}],
    }
    trajectory = run_from_dict(run).agents[0].trajectory
    assert trajectory is not None
    assert [(q.text, q.turn) for q in trajectory.questions] == [
        ("Please share the traceback", 1),
        ("", 1),
        ("Which database?\n- PostgreSQL\n- MySQL", 3),
    ]
    # The request and the empty ask offer no options; the AskUserQuestion call does.
    assert [v.turn for v in trajectory.violations] == [1, 1]


def test_a_bad_tool_call_names_its_path() -> None:
    turns = [{"response": "", "tool_calls": [{"arguments": {"query": "x"}}]}]
    run = {"agents": [{"name": "a", "technical_score": 1, "trajectory": {"turns": turns}}]}
    with pytest.raises(Exception, match=r"tool_calls\[0\]: name is required"):
        run_from_dict(run)


# --- The example file ------------------------------------------------------------------------


def test_the_example_file_is_what_its_generator_writes(tmp_path: Path) -> None:
    out = tmp_path / "rollouts.jsonl"
    GEN.main(["make", str(out)])
    assert out.read_text(encoding="utf-8") == EXAMPLE.read_text(encoding="utf-8")


def test_rollouts_of_one_task_are_one_run_with_one_agent_per_model() -> None:
    records = runs_from_rollouts("example", EXAMPLE.read_text(encoding="utf-8"))
    runs = [run_from_dict(r.raw) for r in records]
    assert [(r.spec_id, r.stage, r.preferences, [a.name for a in r.agents]) for r in runs] == [
        (
            "astropy__astropy-12907",
            "vague",
            ("one_question",),
            ["ppp-seed-oss-36b", "gpt-5", "seed-oss-36b"],
        ),
        ("django__django-11099", "precise", ("answer_more",), ["ppp-seed-oss-36b", "gpt-5"]),
    ]


def test_labels_come_from_the_simulated_users_tags() -> None:
    records = runs_from_rollouts("example", EXAMPLE.read_text(encoding="utf-8"))
    vague, precise = (run_from_dict(r.raw) for r in records)
    thinker, asker, silent = (a.trajectory for a in vague.agents)
    assert thinker is not None and asker is not None and silent is not None
    # One ask although the agent thought aloud with two questions; [Cost 1] is low.
    assert [(q.text, q.effort, q.source) for q in thinker.questions] == [
        ("Which model combination gives the wrong matrix?", Effort.LOW, Source.LABEL)
    ]
    # [Cost 4] (the file path) is high; [Reward 0] is a labelled violation, not a checked one.
    assert [q.effort for q in asker.questions] == [Effort.LOW, Effort.HIGH]
    assert [(v.preference, v.turn, v.source) for v in asker.violations] == [
        ("one_question", 1, Source.LABEL)
    ]
    assert silent.questions == () and silent.violations == ()
    # answer_more is computed from the session: three asks (one empty, one full-width).
    three, none = (a.trajectory for a in precise.agents)
    assert three is not None and none is not None
    assert [q.effort for q in three.questions] == [Effort.LOW, Effort.LOW, Effort.MEDIUM]
    assert three.questions[2].text == ""
    assert three.violations == ()
    assert len(none.violations) == 3


def test_the_technical_score_is_the_tasks_raw_score() -> None:
    records = runs_from_rollouts("example", EXAMPLE.read_text(encoding="utf-8"))
    vague = run_from_dict(records[0].raw)
    assert [a.technical for a in vague.agents] == [1.0, 1.0, 0.0]


def test_import_format_userville_from_the_command_line(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    runner = CliRunner()
    result = runner.invoke(cli, ["import", "--db", str(db), "--format", "userville", str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    assert "imported 2 runs" in result.output
    again = runner.invoke(cli, ["import", "--db", str(db), "--format", "userville", str(EXAMPLE)])
    assert again.exit_code == 0 and "imported 0 runs" in again.output


def test_a_broken_rollout_file_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": "nope", "extra_info": {}}\n', encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["import", "--db", str(tmp_path / "r.db"), "--format", "userville", str(bad)]
    )
    assert result.exit_code == 1
    assert "bad.jsonl:1: messages must be a list" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "r.db").exists()


def test_same_model_twice_on_a_task_gets_numbered() -> None:
    rollout, _ = generate("no_ask", 1)
    text = json.dumps(rollout) + "\n" + json.dumps(rollout) + "\n"
    (record,) = runs_from_rollouts("twice", text)
    assert [a["name"] for a in record.raw["agents"]] == ["model", "model#2"]


# --- Effort as the paper's simulated user sees it -------------------------------------------


def _userville_effort_rows() -> list[dict[str, str]]:
    path = ROOT / "tests" / "data" / "effort_userville.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_asking_for_what_the_problem_statement_says_is_low_effort() -> None:
    """The simulated user knows the precise task: a request for the problem's details,
    which a one-line task could not answer, costs nothing when the statement gives them."""
    from ppp_tui.core.effort import classify, classify_effort

    row = _userville_effort_rows()[0]
    assert row["question"].startswith("Could you provide more details about the issue")
    assert classify_effort(row["question"]) is Effort.HIGH
    assert classify_effort(row["question"], row["context"]) is Effort.LOW
    assert classify(row["question"], row["context"]).answered_by_context
    # A one-line task has no details to give.
    assert classify_effort(row["question"], "Fix the separability matrix.") is Effort.HIGH


def test_the_userville_style_set_is_classified_as_the_simulated_user_would() -> None:
    from ppp_tui.core.effort import classify, classify_effort
    from ppp_tui.core.evaluation import evaluate

    rows = _userville_effort_rows()
    expected = [Effort(r["effort"]) for r in rows]
    predicted = [classify_effort(r["question"], r["context"]) for r in rows]
    assert predicted == [classify(r["question"], r["context"]).effort for r in rows]
    assert evaluate(expected, predicted).accuracy >= 0.85


def test_a_rollout_file_is_told_apart_from_a_run_file() -> None:
    from ppp_tui.storage.userville import looks_like_userville

    assert looks_like_userville(EXAMPLE.read_text(encoding="utf-8"))
    runs = (ROOT / "examples" / "runs.jsonl").read_text(encoding="utf-8")
    assert not looks_like_userville(runs)


def test_an_empty_question_text_is_an_ask_without_words() -> None:
    questions = [{"text": "", "effort": "low", "turn": 1}]
    run = {
        "preferences": ["no_ask"],
        "agents": [{"name": "a", "technical_score": 1, "trajectory": {"questions": questions}}],
    }
    trajectory = run_from_dict(run).agents[0].trajectory
    assert trajectory is not None
    assert [q.text for q in trajectory.questions] == [""]
    assert [v.preference for v in trajectory.violations] == ["no_ask"]
    missing = {"name": "a", "technical_score": 1, "trajectory": {"questions": [{"turn": 1}]}}
    with pytest.raises(Exception, match=r"questions\[0\]: text is required"):
        run_from_dict({"agents": [missing]})
