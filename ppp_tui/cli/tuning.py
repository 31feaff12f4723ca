"""Your preferred agents and what they say about the weights: `prefer`, `regret`, `tune`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ..core.wording import counted
from ..safe_text import inline
from ..storage.reviewers import shown
from .common import (
    STAGE_HELP,
    Env,
    MarkedScores,
    db_options,
    emit_json,
    load_marked,
    marks_options,
    reviewer_options,
    stage_filter,
)

if TYPE_CHECKING:
    from ..core.inverse_error import Choice, InverseErrorTuning
    from ..core.scores import Scores
    from ..core.settings import Weights
    from ..core.tuning import Tuning
    from ..core.tuning2d import Tuning2D


@click.command()
@click.argument("run_id", required=False)
@click.argument("agent", required=False)
@click.option("--clear", is_flag=True, help="Remove the run's preferred mark.")
@click.option(
    "--file",
    "marks_file",
    type=click.Path(dir_okay=False),
    help="Record many marks: CSV or JSON Lines with run_id, agent, reviewer[, at] (- reads"
    " standard input).",
)
@reviewer_options(every=False)
@db_options
def prefer(
    run_id: str | None,
    agent: str | None,
    clear: bool,
    marks_file: str | None,
    reviewer: str | None,
    db: str | None,
    config: str | None,
) -> None:
    """Mark AGENT as the one you preferred for RUN_ID (every change is kept).

    The mark is the current reviewer's (--reviewer, else $PPP_TUI_REVIEWER, else
    [ppp] reviewer in config.toml, else git's user.name, else the login name); each
    reviewer has one current mark per run.

    With --file, every mark of a CSV (with a header) or JSON Lines file of run_id,
    agent, reviewer and optionally at (ISO 8601; else now) is recorded in one
    transaction; exact repeats are skipped, and a bad line changes nothing.

    \b
    Example:
      ppp-tui prefer run-0042 claude-code
      ppp-tui prefer run-0042 --clear
      ppp-tui prefer --file marks.csv
    """
    env = Env(db, config, reviewer)
    if marks_file is not None:
        if run_id is not None or agent is not None or clear:
            raise click.UsageError("--file takes no RUN_ID, AGENT or --clear")
        if reviewer is not None:
            raise click.UsageError("--file names each mark's reviewer: leave out --reviewer")
        _prefer_file(env, marks_file)
        return
    if run_id is None:
        raise click.UsageError("give a RUN_ID and an AGENT (or --clear), or --file")
    if clear == (agent is not None):
        raise click.UsageError("give an AGENT, or --clear (not both)")
    with env.store() as store:
        run_id = store.resolve_run_id(run_id)
        before = store.get_run(run_id).preferred_agent
        store.mark(run_id, agent, source="cli")
        who = shown(store.reviewer)
    was = f" (was {inline(before)})" if before and before != agent else ""
    if agent is None:
        click.echo(f"{inline(run_id)}: {inline(who)}'s preferred mark cleared{was}")
    else:
        click.echo(f"{inline(run_id)}: {inline(who)}'s preferred agent is {inline(agent)}{was}")


def _prefer_file(env: Env, marks_file: str) -> None:
    from pathlib import Path

    from ..storage.mark_files import read_marks

    if marks_file == "-":
        import sys

        marks = read_marks(Path("<stdin>"), sys.stdin.buffer.read())
    else:
        marks = read_marks(Path(marks_file))
    with env.store() as store:
        added = store.add_marks(marks, source="file")
    repeats = len(marks) - added
    skipped = f"; {repeats} exact repeats skipped" if repeats else ""
    click.echo(f"{inline(marks_file)}: {counted(added, 'mark')} recorded{skipped}")


@click.command()
@click.option("--stage", help=STAGE_HELP)
@click.option("--json", "as_json", is_flag=True, help="One JSON document: regret and agreement.")
@marks_options
def regret(
    stage: str | None,
    as_json: bool,
    env: Env,
) -> None:
    """Mean regret and agreement over the marked runs, under the configured weights.

    \b
    Example:
      ppp-tui regret
      ppp-tui regret --stage implement --json
    """
    from ..core.stages import label
    from ..safe_text import number
    from .documents import regret_document
    from .tables import cut

    loaded = load_marked(env, env.settings(), stage)
    stage = loaded.stage
    document = {
        **loaded.whose,
        **regret_document(loaded.scores, stage, runs=as_json, stages=loaded.stages),
    }
    if as_json:
        emit_json(document)
        return
    if not document["marked_runs"]:
        where = "" if stage is None else f" in {label(stage)}"
        click.echo(
            inline(
                loaded.others
                or f"no marked runs{where} yet: mark preferred agents with"
                " `ppp-tui prefer RUN AGENT`"
            )
        )
        return
    w = document["weights"]
    over = counted(document["marked_runs"], "marked run")
    if env.all_reviewers:
        over = (
            f"{counted(document['marked_runs'], 'mark')} by every reviewer (each one observation)"
        )
    click.echo(
        f"weights {_label(w)}: {over}, mean regret {number(document['mean_regret'], 4)},"
        f" agreement {document['agreement']:.1%}"
    )
    click.echo(
        f"  {'stage':<14} {'weights':>9} {'marked':>7} {'mean regret':>12} {'agreement':>10}"
    )
    for name, figures in document["per_stage"].items():
        if not figures["marked_runs"]:
            continue
        sw = figures["weights"]
        click.echo(
            f"  {cut(name, 14):<14} {_label(sw):>9}"
            f" {figures['marked_runs']:>7} {number(figures['mean_regret'], 4):>12}"
            f" {figures['agreement']:>10.1%}"
        )


def _label(weights: dict[str, float]) -> str:
    """A weights document as tables show it: technical/interaction, or the three weights."""
    keys: tuple[str, ...] = ("technical", "proactivity", "personalization")
    if "proactivity" not in weights:
        keys = ("technical", "interaction")
    return "/".join(f"{weights[key]:.2f}" for key in keys)


def _cv_note(tuning: Tuning | Tuning2D) -> str:
    """The cross-validated figures, as the end of a tuning line ("" without them)."""
    if not tuning.cv_folds:
        return ""
    return (
        f"; {tuning.cv_folds}-fold CV: regret {tuning.cv_mean_regret:.4f},"
        f" agreement {tuning.cv_agreement:.1%}"
    )


def _render_tuning(scope: str | None, tuning: Tuning) -> None:
    from ..core.stages import scope_label

    cv = _cv_note(tuning)
    click.echo(
        f"{inline(scope_label(scope))}: {counted(tuning.marked_runs, 'marked run')};"
        f" technical {tuning.before_technical:.4g}"
        f" -> {tuning.technical:.4f} (interaction {tuning.interaction:.4f}); mean regret"
        f" {tuning.before_mean_regret:.4f} -> {tuning.mean_regret:.4f}; agreement"
        f" {tuning.before_agreement:.1%} -> {tuning.agreement:.1%}{cv}"
    )
    if tuning.ci is not None:
        low, high = tuning.ci
        click.echo(
            f"  95% interval of the tuned weight: {low:.4f}-{high:.4f}"
            f" ({tuning.ci_resamples} bootstrap resamples)"
        )


def _render_free_tuning(scope: str | None, tuning: Tuning2D) -> None:
    from ..core.stages import scope_label

    before = tuning.before
    cv = _cv_note(tuning)
    click.echo(
        f"{inline(scope_label(scope))}: {counted(tuning.marked_runs, 'marked run')};"
        f" technical {before.technical:.4g} -> {tuning.technical:.4f},"
        f" proactivity {before.proactivity:.4g} -> {tuning.proactivity:.4f},"
        f" personalization {before.personalization:.4g} -> {tuning.personalization:.4f};"
        f" mean regret {tuning.before_mean_regret:.4f} -> {tuning.mean_regret:.4f};"
        f" agreement {tuning.before_agreement:.1%} -> {tuning.agreement:.1%}{cv}"
    )
    region = tuning.region
    if region is not None:
        click.echo(
            "  95% intervals: "
            + ", ".join(
                f"{name} {low:.4f}-{high:.4f}"
                for name, (low, high) in (
                    ("technical", region.technical),
                    ("proactivity", region.proactivity),
                    ("personalization", region.personalization),
                )
            )
            + f"; spread {region.spread:.4f} ({region.resamples} bootstrap resamples)"
        )


@click.command()
@click.option("--stage", help="Tune this stage's weights on its own marked runs (a known stage).")
@click.option("--per-stage", is_flag=True, help="Tune every stage that has marked runs.")
@click.option(
    "--three-weights",
    is_flag=True,
    help="Free proactivity and personalization: tune both (technical follows).",
)
@click.option(
    "--method",
    type=click.Choice(["exact", "inverse-error"]),
    default="exact",
    show_default=True,
    help="exact: the minimum of mean regret over your marks; inverse-error: weights"
    " from how far technical and interaction are from perfect, shown beside it.",
)
@click.option("--write", is_flag=True, help="Save the tuned weights to config.toml.")
@click.option("--json", "as_json", is_flag=True, help="JSON: the tuned weights and their figures.")
@marks_options
def tune(
    stage: str | None,
    per_stage: bool,
    three_weights: bool,
    method: str,
    write: bool,
    as_json: bool,
    env: Env,
) -> None:
    """Fit the technical weight to your preferred marks (exact minimum of mean regret).

    Also reports k-fold cross-validated figures and a 95% bootstrap interval of the
    tuned weight (200 seeded resamples of the marked runs).

    With --three-weights, proactivity and personalization are tuned apart (technical
    is 1 - (proactivity + personalization) / 2): the exact minimum over both, with a
    95% interval of each weight from 50 seeded resamples.

    With --method inverse-error, the pair comes from every agent with a trajectory
    in the scope's runs, marked or not: each score's error is how far its mean is
    from perfect, and w_t = (1/error_t) / (1/error_t + 1/error_i). Its mean regret
    and agreement over the marks are shown beside the exact optimum's; --write saves
    the inverse-error pair. It gives the pair only, so not with --three-weights.

    \b
    Example:
      ppp-tui tune
      ppp-tui tune --per-stage --write
      ppp-tui tune --three-weights --json
      ppp-tui tune --method inverse-error --per-stage
    """
    from ..core.stages import NO_STAGE

    if stage is not None and per_stage:
        raise click.UsageError("--stage and --per-stage exclude each other")
    inverse = method == "inverse-error"
    if inverse and three_weights:
        raise click.UsageError(
            "--method inverse-error gives the technical/interaction pair: leave out --three-weights"
        )
    if inverse and env.all_reviewers:
        raise click.UsageError(
            "--method inverse-error compares with one reviewer's marks: use --reviewer"
        )
    settings = env.settings(creating=write)
    with env.store() as store:
        if stage_filter(store, stage) == NO_STAGE:
            raise click.UsageError(
                "runs without a stage use the global weights: tune them without --stage"
            )
    # Every stage's runs (a stage is tuned on its own rows); inverse-error weights come
    # from every run of the scope, marked or not.
    loaded = load_marked(env, settings, None, marked_only=not inverse)
    if inverse:
        method_of = _inverse_error_method
    elif three_weights:
        method_of = _free_method
    else:
        method_of = _exact_method
    tuned, document, render, saved = method_of(loaded.scores, stage, per_stage)
    if not tuned:
        _nothing_to_tune(loaded, stage, per_stage)
    if as_json:
        documents = [document(scope, tuning) for scope, tuning in tuned]
        emit_json(documents if per_stage else documents[0])
    else:
        for scope, tuning in tuned:
            render(scope, tuning)
    if write:
        _write_tuned(env, [(scope, *saved(tuning)) for scope, tuning in tuned])


# A tuning method: (scope, result) per scope tuned, the result's --json document, its
# text, and the weights it saves with their note.
Method = tuple[
    list[tuple[str | None, Any]],
    Callable[[str | None, Any], dict[str, Any]],
    Callable[[str | None, Any], None],
    Callable[[Any], tuple["Weights", str]],
]


def _exact_method(scores: Scores, stage: str | None, per_stage: bool) -> Method:
    """`tune`: the exact optimum of the technical weight."""
    from ..core.scores import provenance, tune_scope, tune_stages
    from ..core.settings import Weights
    from .documents import tune_document

    results: list[tuple[str | None, Tuning]]
    if per_stage:
        results = list(tune_stages(scores))
    else:
        scope, tuning = tune_scope(scores, stage)
        results = [] if tuning is None else [(scope, tuning)]

    def saved(tuning: Tuning) -> tuple[Weights, str]:
        return Weights.from_technical(tuning.technical), provenance(tuning)

    return results, tune_document, _render_tuning, saved


def _free_method(scores: Scores, stage: str | None, per_stage: bool) -> Method:
    """`tune --three-weights`: proactivity and personalization free."""
    from ..core.free_optimum import TuningError
    from ..core.scores import provenance, tune_scope_free, tune_stages_free
    from .documents import tune_free_document

    results: list[tuple[str | None, Tuning2D]]
    try:
        if per_stage:
            results = list(tune_stages_free(scores))
        else:
            scope, tuning = tune_scope_free(scores, stage)
            results = [] if tuning is None else [(scope, tuning)]
    except TuningError as error:
        raise click.ClickException(str(error)) from None

    def saved(tuning: Tuning2D) -> tuple[Weights, str]:
        return tuning.weights, provenance(tuning)

    return results, tune_free_document, _render_free_tuning, saved


def _inverse_error_method(scores: Scores, stage: str | None, per_stage: bool) -> Method:
    """`tune --method inverse-error`: the inverse-error pair beside the exact optimum."""
    from ..core.inverse_error import tune_inverse_error, tune_inverse_error_stages
    from ..core.settings import Weights

    results: list[tuple[str | None, InverseErrorTuning]]
    if per_stage:
        results = list(tune_inverse_error_stages(scores.lines, scores.settings))
    else:
        tuning = tune_inverse_error(scores.lines, scores.settings, stage)
        results = [] if tuning is None else [(stage, tuning)]

    def saved(tuning: InverseErrorTuning) -> tuple[Weights, str]:
        return Weights.from_technical(tuning.technical), _inverse_error_note(tuning)

    return results, _inverse_error_document, _render_inverse_error, saved


def _inverse_error_document(scope: str | None, tuning: InverseErrorTuning) -> dict[str, Any]:
    """`tune --method inverse-error --json` for one scope (None: the global weights)."""
    from ..core.stages import scope_label

    estimate = tuning.estimate

    def figures(choice: Choice) -> dict[str, float]:
        return {
            "technical": choice.technical,
            "interaction": choice.interaction,
            "mean_regret": choice.mean_regret,
            "agreement": choice.agreement,
        }

    return {
        "scope": scope_label(scope),
        "method": "inverse-error",
        "runs": tuning.runs,
        "agents": estimate.agents,
        "technical_norm": estimate.technical_norm,
        "interaction_norm": estimate.interaction_norm,
        "technical_error": estimate.technical_error,
        "interaction_error": estimate.interaction_error,
        "marked_runs": tuning.marked_runs,
        **figures(tuning.inverse_error),
        "exact": figures(tuning.exact),
        "before": figures(tuning.before),
    }


def _render_inverse_error(scope: str | None, tuning: InverseErrorTuning) -> None:
    from ..core.stages import scope_label

    estimate = tuning.estimate
    click.echo(
        f"{inline(scope_label(scope))}: inverse-error weights from {estimate.agents:,}"
        f" agents with a trajectory in {counted(tuning.runs, 'run')}"
    )
    click.echo(
        f"  error_t = 1 - {estimate.technical_norm:.4f} = {estimate.technical_error:.4f},"
        f" error_i = |{estimate.interaction_norm:.4f}| = {estimate.interaction_error:.4f}"
        " (mean norms)"
    )
    click.echo(
        f"  over {counted(tuning.marked_runs, 'marked run')}:"
        f" {'technical':>10} {'interaction':>12} {'mean regret':>12} {'agreement':>10}"
    )
    for name, choice in (
        ("current", tuning.before),
        ("inverse-error", tuning.inverse_error),
        ("exact optimum", tuning.exact),
    ):
        click.echo(
            f"    {name:<18} {choice.technical:>10.4f} {choice.interaction:>12.4f}"
            f" {choice.mean_regret:>12.4f} {choice.agreement:>10.1%}"
        )


def _inverse_error_note(tuning: InverseErrorTuning) -> str:
    """The comment written beside inverse-error weights (as `provenance` for tuned ones)."""
    from datetime import datetime

    stamp = datetime.now().astimezone().strftime("%Y-%m-%d %H:%M")
    return (
        f"inverse-error weights {stamp} from {counted(tuning.estimate.agents, 'agent')} in"
        f" {counted(tuning.runs, 'run')};"
        f" mean regret over {counted(tuning.marked_runs, 'marked run')}"
        f" {tuning.before.mean_regret:.4f} -> {tuning.inverse_error.mean_regret:.4f}"
    )


def _write_tuned(env: Env, tuned: list[tuple[str | None, Weights, str]]) -> None:
    """Save each scope's tuned weights (None: the global ones), each with a note that
    tells its own tuning: its scope's marked runs and regret."""
    from ..storage.config_write import save_weights

    global_weights = None
    stages: dict[str, Weights] = {}
    notes: dict[str | None, str] = {}
    for scope, weights, note in tuned:
        if scope is None:
            global_weights = weights
        else:
            stages[scope] = weights
        notes[scope] = note
    save_weights(env.config_path, global_weights, stages, notes=notes)
    click.echo(f"saved to {inline(env.config_path)}", err=True)
    if env.config_note:
        click.echo(f"note: {inline(env.config_note)}", err=True)


def _nothing_to_tune(loaded: MarkedScores, stage: str | None, per_stage: bool) -> NoReturn:
    if stage is None and not per_stage and loaded.scores.arrays.marked.any():
        raise click.ClickException(
            "no marked runs use the global weights (each marked run's stage has its"
            " own table); tune those with --stage STAGE or --per-stage"
        )
    where = f" in stage {stage!r}" if stage else ""
    if loaded.others:
        raise click.ClickException(loaded.others.replace(" by ", f"{where} to tune on by ", 1))
    raise click.ClickException(
        f"no marked runs{where} to tune on; mark preferred agents with"
        " `ppp-tui prefer RUN AGENT` or in the app (p)"
    )
