"""`ppp-tui show RUN_ID`: one run whole, as a JSON document or as text to read.

For every agent its models, session ids and technical score with its source; for each
of its questions how it was asked, its effort and where that came from, its options and
the user's answer; and the files it changed, with the lines added and removed.
"""

from __future__ import annotations

from typing import Any

import click

from ..analysis.describe import answer_text, effort_source, technical_text
from ..core.model import Agent, AskedWith, Question, Run
from ..core.scoring import Ranking, rank_run
from ..core.sessions.changes import FileChange
from ..core.sessions.waiting import MARK as WAITING_MARK
from ..core.sessions.waiting import agent_waiting
from ..safe_text import inline, number
from ..storage.changes import changed_files
from ..storage.reviewers import shown
from .common import Env, db_options, emit_json, reviewer_options


def question_document(question: Question) -> dict[str, Any]:
    return {
        "text": question.text,
        "effort": question.effort.value,
        "effort_source": effort_source(question),
        "judged_model": question.judged_model,
        "asked_with": question.asked_with.value,
        "options": list(question.options),
        "answer": question.answer,
        "dismissed": question.dismissed,
        "seconds_to_answer": question.seconds_to_answer,
        "turn": question.turn,
    }


# Files the text of `show` lists per agent; `diff` shows them all.
_FILES_SHOWN = 10


def change_document(change: FileChange) -> dict[str, Any]:
    return {"path": change.path, "added": change.added, "removed": change.removed}


def _agent_document(agent: Agent, ranking: Ranking, changes: list[FileChange]) -> dict[str, Any]:
    score = ranking.agent(agent.name)
    trajectory = agent.trajectory
    return {
        "name": agent.name,
        "rank": score.rank if score else None,
        "models": list(agent.models) or ([agent.model] if agent.model else []),
        "sessions": list(agent.sessions),
        "technical": None if agent.unscored else agent.technical,
        "technical_source": agent.technical_source,
        "judged_model": agent.judged_model,
        "r_proact": score.r_proact if score else None,
        "r_pers": score.r_pers if score else None,
        "final": score.final if score else None,
        "turns": len(trajectory.turns) if trajectory else 0,
        "waiting_for_user": agent_waiting(agent),
        "output": agent.output,
        "questions": [question_document(q) for q in trajectory.questions] if trajectory else [],
        "changes": [change_document(change) for change in changes],
    }


def show_document(
    run: Run,
    ranking: Ranking,
    marks: dict[str, str],
    changes: dict[str, list[FileChange]] | None = None,
) -> dict[str, Any]:
    """The `show --json` document; `changes` are each agent's changed files."""
    changes = changes or {}
    return {
        "run_id": run.id,
        "stage": run.stage,
        "task": run.task,
        "created_at": run.created_at,
        "preferred_agent": run.preferred_agent,
        "marks": {shown(reviewer): agent for reviewer, agent in marks.items()},
        "best_agent": ranking.best_agent if ranking.agents else None,
        "agents": [
            _agent_document(agent, ranking, changes.get(agent.name, [])) for agent in run.agents
        ],
    }


def _render_changes(changes: list[FileChange]) -> None:
    files = "file" if len(changes) == 1 else "files"
    added = sum(change.added for change in changes)
    removed = sum(change.removed for change in changes)
    click.echo(f"  changes: {len(changes)} {files}, +{added} -{removed}")
    for change in changes[:_FILES_SHOWN]:
        click.echo(f"    {inline(change.path)}  +{change.added} -{change.removed}")
    if len(changes) > _FILES_SHOWN:
        click.echo(f"    … and {len(changes) - _FILES_SHOWN} more (ppp-tui diff)")


def _render(
    run: Run, ranking: Ranking, marks: dict[str, str], changes: dict[str, list[FileChange]]
) -> None:
    click.secho(inline(run.id), bold=True, nl=False)
    click.echo(f"  ({inline(run.stage) or 'no stage'})  {inline(run.created_at) or ''}".rstrip())
    if run.task:
        click.echo(f"task: {inline(run.task[:300])}{'…' if len(run.task) > 300 else ''}")
    if marks:
        listed = "; ".join(f"{shown(who)} → {agent}" for who, agent in marks.items())
        click.echo(f"marks: {inline(listed)}")
    # In rank order, as `rank` lists them (the JSON keeps the run's own order).
    place = {score.name: score.rank for score in ranking.agents}
    for agent in sorted(run.agents, key=lambda a: place.get(a.name, len(place) + 1)):
        score = ranking.agent(agent.name)
        click.echo()
        rank = f"#{score.rank} " if score else ""
        click.secho(f"{rank}{inline(agent.name)}", bold=True, nl=False)
        models = ", ".join(agent.models) or agent.model or ""
        click.echo(f"  {inline(models)}" if models else "")
        if agent.sessions:
            click.echo(f"  sessions: {inline(', '.join(agent.sessions))}")
        if agent_waiting(agent):
            click.echo(f"  {WAITING_MARK} waiting for you: its last turn ends on a question")
        click.echo(f"  technical: {technical_text(agent)}")
        if score is not None:
            click.echo(
                f"  R_Proact {number(score.r_proact, signed=True)}"
                f"  R_Pers {number(score.r_pers, signed=True)}  final {number(score.final)}"
            )
        if changes.get(agent.name):
            _render_changes(changes[agent.name])
        questions = agent.trajectory.questions if agent.trajectory else ()
        for question in questions:
            how = "asked with the tool" if question.asked_with is AskedWith.TOOL else "in text"
            turn = f"turn {question.turn}, " if question.turn is not None else ""
            click.echo(
                f"  ? {inline(question.text)}"
                f"  [{question.effort.value}, {effort_source(question)}; {turn}{how}]"
            )
            if question.options:
                click.echo(f"      options: {inline(' | '.join(question.options))}")
            if question.asked_with is AskedWith.TOOL:
                click.echo(f"      {inline(answer_text(question))}")


@click.command()
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="One JSON document (docs/json.md).")
@reviewer_options(every=False)
@db_options
def show(
    run_id: str, as_json: bool, reviewer: str | None, db: str | None, config: str | None
) -> None:
    """Show one run whole: each agent's models, sessions, technical score and where it
    came from, every question it asked with its effort, options and answer, and the
    files it changed (`ppp-tui diff` shows how).

    \b
    Example:
      ppp-tui show run-0042
      ppp-tui show session-1a2b3c4d5e6f --json
    """
    env = Env(db, config, reviewer)
    settings = env.settings()
    with env.store() as store:
        run = store.get_run(store.resolve_run_id(run_id))
        marks = store.current_marks(run.id)
        changes = changed_files(store, run.id)
    ranking = rank_run(run, settings)
    if as_json:
        emit_json(show_document(run, ranking, marks, changes))
    else:
        _render(run, ranking, marks, changes)
