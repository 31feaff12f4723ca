"""What a run's screen says about the run's data, as text and table cells: the
consensus result, a session agent's facts, a question's row."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from textual.content import Content

from ...analysis.describe import answer_text, effort_source, technical_text
from ...core.model import Agent, AskedWith, Question, Run
from ...core.sessions.waiting import MARK as WAITING
from ...core.sessions.waiting import agent_waiting
from ..text import cell, literal, plain
from .fitted_table import Column, numbers

ANSWER_CELLS = 10  # the least an answer in the questions table shows, before the time
# What the questions table's other columns and an answer's time take (about 40 cells),
# with the least the question keeps (about 20): the answer has half of the rest.
QUESTION_FIXED = 60

# The agents table: what decides the pick first, so 80 columns show it; the rest scrolls,
# and a column of numbers that cannot show whole is left out.
AGENT_COLUMNS = (
    *numbers("#"),
    Column("agent"),
    *numbers("final", "technical", "R_Proact", "R_Pers", "interaction"),
    Column("mark"),
    *numbers("gap"),
    Column("flags"),
    *numbers("relevance × confidence"),
)
VIOLATION_COLUMNS = (
    *numbers("turn"),
    Column("preference"),
    Column("severity"),
    *numbers("penalty"),
    Column("source"),
)


def _consensus(run: Run) -> dict[str, Any]:
    if run.consensus is None:
        return {}
    try:
        value = json.loads(run.consensus)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def consensus_summary(run: Run) -> str:
    """One line of the run's consensus result: status, verdict, artifacts, failures."""
    consensus = _consensus(run)
    if not consensus and not any(agent.failure for agent in run.agents):
        return ""
    facts = []
    for key, label in (("status", "status"), ("verdict", "verdict")):
        if consensus.get(key) is not None:
            facts.append(f"{label} {consensus[key]}")
    if consensus.get("artifacts_count") is not None:
        facts.append(f"{consensus['artifacts_count']} artifacts")
    if consensus.get("degraded"):
        facts.append("degraded")
    failed = [agent.name for agent in run.agents if agent.failure]
    if failed:
        facts.append(f"failed: {', '.join(failed)}")
    return " · ".join(facts)


def consensus_text(run: Run) -> Content:
    """The Consensus tab: agreements, conflicts, and the synthesis, shown literally."""
    consensus = _consensus(run)
    lines = []
    for key in (
        "status",
        "verdict",
        "artifacts_count",
        "agreements",
        "conflicts",
        "missing_agents",
        "output_path",
    ):
        value = consensus.get(key)
        if value is None:
            continue
        text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        lines.append(f"{key.replace('_', ' ')}: {text}")
    synthesis = consensus.get("synthesis")
    if isinstance(synthesis, str) and synthesis.strip():
        lines += ["", synthesis]
    return plain("\n".join(lines) or "No consensus result.")


def has_steps(agent: Agent | None) -> bool:
    """Whether an agent is a session's: its turns hold the steps the user lived."""
    trajectory = agent.trajectory if agent is not None else None
    return trajectory is not None and any(turn.steps for turn in trajectory.turns)


def has_thinking(agent: Agent | None) -> bool:
    """Whether a session agent's turns hold any thinking to show (some tools record
    none, and an agent may not have thought aloud)."""
    trajectory = agent.trajectory if agent is not None else None
    return trajectory is not None and any(
        kind == "thinking" and text.strip()
        for turn in trajectory.turns
        for kind, text in turn.steps
    )


def agent_facts(agent: Agent) -> str:
    """One line about a session agent: its technical score and where it came from, its
    models and its sessions; first, when it waits for the user, that it does."""
    facts = [f"technical {technical_text(agent)}"]
    if agent_waiting(agent):
        facts.insert(0, f"{WAITING} waiting for you")
    if agent.models:
        facts.append(f"model{'s' if len(agent.models) > 1 else ''} {', '.join(agent.models)}")
    if agent.sessions:
        facts.append(f"session{'s' if len(agent.sessions) > 1 else ''} {', '.join(agent.sessions)}")
    return literal(" · ".join(facts), True)


def answer_width(width: int) -> int:
    """The cells an answer takes in the questions table on a screen `width` wide: half
    of what the other columns leave, the question having the other half."""
    return max(ANSWER_CELLS, (width - QUESTION_FIXED) // 2)


def question_cells(
    question: Question, asked: bool, answer_cells: int = ANSWER_CELLS
) -> tuple[Any, ...]:
    """A row of the questions table; with `asked`, how the question was asked and, for
    one asked through a tool, its answer (cut to `answer_cells`) and the time taken."""
    cells: list[Any] = [
        "—" if question.turn is None else str(question.turn),
        question.effort.value,
        effort_source(question),
    ]
    if asked:
        answer = "—"
        if question.asked_with is AskedWith.TOOL:
            shown = question.answer
            if shown is not None:
                shown = literal(shown, True)
                if len(shown) > answer_cells:
                    shown = f"{shown[: answer_cells - 1].rstrip()}…"
            answer = answer_text(replace(question, answer=shown))
        cells += [question.asked_with.value, cell(answer)]
    return (*cells, cell(question.text))
