"""The run model's objects, made fast.

A frozen dataclass's __init__ sets each field through object.__setattr__; these fill a
new object's __dict__ in one go instead, about twice as fast, for the dozen objects of
each run (a million at 100k runs, in an import's parse workers and the demo's). They
make the very object the class's own constructor makes: the classes have no
__post_init__, default factory or slots, and every field is given, defaults too
(tests/test_runs_equivalence.py and tests/test_demo.py check each against its class).
"""

from __future__ import annotations

from typing import Any

from ..model import (
    Agent,
    AskedWith,
    Effort,
    Question,
    Run,
    Severity,
    Source,
    Trajectory,
    Turn,
    Violation,
)

new = object.__new__


def new_turn(prompt: str, response: str, tokens: int | None, latency: int | None, at: Any) -> Turn:
    made: Turn = new(Turn)
    made.__dict__.update(
        prompt=prompt,
        response=response,
        token_count=tokens,
        latency_ms=latency,
        timestamp=at,
        steps=(),
    )
    return made


def new_question(text: str, effort: Effort, turn: int | None, source: Source) -> Question:
    made: Question = new(Question)
    made.__dict__.update(
        text=text,
        effort=effort,
        turn=turn,
        source=source,
        asked_with=AskedWith.TEXT,
        options=(),
        answer=None,
        dismissed=False,
        seconds_to_answer=None,
        judged_model=None,
    )
    return made


def new_violation(
    preference: str, severity: Severity, penalty: float | None, turn: int | None, source: Source
) -> Violation:
    made: Violation = new(Violation)
    made.__dict__.update(
        preference=preference, severity=severity, penalty=penalty, turn=turn, source=source
    )
    return made


def new_trajectory(
    turns: tuple[Turn, ...],
    questions: tuple[Question, ...],
    violations: tuple[Violation, ...],
    unchecked: tuple[str, ...],
) -> Trajectory:
    made: Trajectory = new(Trajectory)
    made.__dict__.update(
        turns=turns, questions=questions, violations=violations, unchecked=unchecked
    )
    return made


def new_agent(
    name: str,
    technical: float,
    trajectory: Trajectory | None,
    model: str | None,
    relevance: float | None,
    confidence: float | None,
    output: str | None,
    failure: str | None = None,
) -> Agent:
    made: Agent = new(Agent)
    made.__dict__.update(
        name=name,
        technical=technical,
        trajectory=trajectory,
        model=model,
        relevance=relevance,
        confidence=confidence,
        output=output,
        failure=failure,
        technical_source=None,
        models=(),
        sessions=(),
        judged_model=None,
        edits=None,
    )
    return made


def new_run(
    run_id: str,
    agents: tuple[Agent, ...],
    spec_id: str | None,
    stage: str | None,
    task: str | None,
    created_at: str | None,
    preferences: tuple[str, ...],
    selected_agent: str | None,
    preferred_agent: str | None,
    iterations: tuple[float, ...],
    consensus: str | None = None,
) -> Run:
    made: Run = new(Run)
    made.__dict__.update(
        id=run_id,
        agents=agents,
        spec_id=spec_id,
        stage=stage,
        task=task,
        created_at=created_at,
        preferences=preferences,
        selected_agent=selected_agent,
        preferred_agent=preferred_agent,
        iterations=iterations,
        consensus=consensus,
    )
    return made
