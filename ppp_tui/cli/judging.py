"""`judge`: an LLM judge, through any OpenAI-compatible endpoint, for the efforts the
classifier gave and the technical score of unscored agents; `--evaluate` measures it
against the labelled questions beside the rule classifier (docs/judge.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

import click

from ..safe_text import inline
from .common import STAGE_HELP, Env, db_options, emit_json, progress_bar, stage_filter

if TYPE_CHECKING:
    from ..core.evaluation import Evaluation
    from ..core.settings import JudgeSettings
    from ..judging.work import EvaluationReport, Report, Tally


@click.command()
@click.option("--stage", help=STAGE_HELP)
@click.option("--run", "run_id", metavar="RUN_ID", help="Only this run.")
@click.option(
    "--limit", type=click.IntRange(min=1), metavar="N", help="Only the first N runs (by id)."
)
@click.option(
    "--technical",
    is_flag=True,
    help="Also score each unscored agent (no test run, no hand rating) from 0 to 1.",
)
@click.option(
    "--evaluate",
    is_flag=True,
    help="Judge the labelled questions instead, and compare with the rule classifier.",
)
@click.option("--refresh", is_flag=True, help="Ask again what the cache already holds.")
@click.option("--dry-run", is_flag=True, help="Only count the requests and estimate their tokens.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document (docs/json.md).")
@db_options
def judge(
    stage: str | None,
    run_id: str | None,
    limit: int | None,
    technical: bool,
    evaluate: bool,
    refresh: bool,
    dry_run: bool,
    as_json: bool,
    db: str | None,
    config: str | None,
) -> None:
    """Label the effort of classified questions with an LLM judge ([ppp.judge]).

    One request per question, with the run's task text, to the OpenAI-compatible
    endpoint config.toml's [ppp.judge] names; the key is read from the environment
    variable its api_key_env names. Labels that came with the data are never changed.
    Answers are cached by model, prompt version and input: judging again sends no
    request for them (--refresh does). A failure keeps what was received before it;
    run the command again to continue.

    \b
    Example:
      ppp-tui judge --dry-run
      ppp-tui judge --stage implement --technical
      ppp-tui judge --evaluate --json
    """
    from ..judging.client import JudgeError, shown_endpoint
    from ..judging.work import Judging
    from ..storage import judgments

    if evaluate and technical:
        raise click.UsageError("--evaluate judges labelled questions; leave out --technical")
    env = Env(db, config)
    settings = env.settings()
    if settings.judge is None:
        raise click.ClickException(
            f"{inline(env.config_path)}: no [ppp.judge] table, so no judge to ask; add one"
            " with base_url and model (docs/judge.md)"
        )
    endpoint = shown_endpoint(settings.judge.base_url)
    with env.store() as store:
        stage = stage_filter(store, stage)
        if run_id is not None:
            run_id = store.resolve_run_id(run_id)  # an unknown id is one error line
        work = Judging(store, settings.judge, refresh=refresh, warn=_warn)
        questions = judgments.questions(store, stage, run_id, limit, labelled=evaluate)
        with _progress(evaluate) as progress:
            try:
                if evaluate:
                    if not questions:
                        raise click.ClickException(
                            "no labelled questions in scope to evaluate the judge on"
                        )
                    report, evaluation = work.evaluate(questions, dry_run, progress)
                else:
                    agents = judgments.agents(store, stage, run_id, limit) if technical else None
                    report = work.run(questions, agents, dry_run, progress)
                    evaluation = None
            except JudgeError as error:
                raise click.ClickException(
                    f"{error}; the judgments received before are kept: run the command"
                    " again to continue"
                ) from None
    if as_json:
        document = _document(settings.judge, endpoint, report, dry_run)
        if evaluate:
            document = _evaluation_document(document, report, evaluation)
        emit_json(document)
    elif dry_run:
        _render_dry_run(settings.judge, endpoint, report, evaluate)
    elif evaluation is not None:
        _render_evaluation(settings.judge, report, evaluation)
    else:
        _render(settings.judge, report)


def _warn(line: str) -> None:
    """A warning about the endpoint (already made safe), on standard error."""
    click.echo(f"warning: {line}", err=True)


@contextmanager
def _progress(evaluate: bool) -> Iterator[Callable[[int], Callable[[int], None] | None]]:
    """The progress bar of the requests (a terminal only), made once their number is known."""
    with ExitStack() as stack:

        def start(total: int) -> Callable[[int], None] | None:
            label = "evaluating" if evaluate else "judging"
            return stack.enter_context(progress_bar(total, label, minimum=1))

        yield start


def _document(judge: JudgeSettings, endpoint: str, report: Report, dry_run: bool) -> dict[str, Any]:
    from ..core.judge import EFFORT_PROMPT_VERSION, TECHNICAL_PROMPT_VERSION

    return {
        "endpoint": endpoint,
        "model": judge.model,
        "prompt_versions": {"effort": EFFORT_PROMPT_VERSION, "technical": TECHNICAL_PROMPT_VERSION},
        "dry_run": dry_run,
        "requests": report.requests,
        "estimated_tokens": report.estimated_tokens,
        "questions": report.questions.document(),
        "technical": (
            None
            if report.technical is None
            else {**report.technical.document(), "no_output": report.technical.no_output}
        ),
    }


def _evaluation_document(
    base: dict[str, Any], report: Report, evaluation: EvaluationReport | None
) -> dict[str, Any]:
    del base["technical"], base["questions"]
    return {
        **base,
        "questions": report.questions.total,
        "cached": report.questions.cached,
        "answered": None if evaluation is None else evaluation.answered,
        "unparseable": None if evaluation is None else evaluation.unparseable,
        "judge": None if evaluation is None else _metrics(evaluation.judge),
        "classifier_on_answered": (
            None if evaluation is None else _metrics(evaluation.classifier_on_answered)
        ),
        "judge_or_classifier": (
            None if evaluation is None else _metrics(evaluation.judge_or_classifier)
        ),
        "classifier": None if evaluation is None else _metrics(evaluation.classifier),
    }


def _metrics(result: Evaluation | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {
        "accuracy": result.accuracy,
        "macro_f1": result.macro_f1,
        "per_class": {
            level.value: {
                "precision": m.precision,
                "recall": m.recall,
                "f1": m.f1,
                "support": m.support,
            }
            for level, m in result.per_class.items()
        },
        "confusion": {
            expected.value: {
                predicted.value: result.confusion[expected, predicted]
                for predicted in result.per_class
            }
            for expected in result.per_class
        },
    }


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'s' * (count != 1)}"


def _render_dry_run(judge: JudgeSettings, endpoint: str, report: Report, evaluate: bool) -> None:
    kind = "labelled" if evaluate else "classified"
    tallies = [(report.questions, f"{kind} question")]
    if report.technical is not None:
        tallies.append((report.technical, "unscored agent"))
    parts = []
    for tally, word in tallies:
        part = _plural(tally.total, word)
        if tally.cached and tally.cached == tally.total - tally.no_output:
            part += (
                ", all answered from the cache" if tally.cached > 1 else ", answered from the cache"
            )
        elif tally.cached:
            part += f", {tally.cached:,} answered from the cache"
        parts.append(part)
    click.echo(
        f"dry run: {_plural(report.requests, 'request')} to {endpoint} for {inline(judge.model)}"
        f" ({'; '.join(parts)}); about {report.estimated_tokens:,} tokens in; nothing sent"
    )


def _tally_line(what: str, tally: Tally, total_word: str) -> str:
    line = f"{what}: {tally.judged:,} of {_plural(tally.total, total_word)} judged"
    details = []
    if tally.cached:
        details.append(f"{tally.cached:,} from the cache")
    if tally.requests:
        details.append(_plural(tally.requests, "request"))
    return line + (f" ({', '.join(details)})" if details else "")


def _render(judge: JudgeSettings, report: Report) -> None:
    questions = report.questions
    technical = report.technical
    click.echo(f"judge: {inline(judge.model)}")
    line = _tally_line("questions", questions, "classified question")
    click.echo(f"{line}; {_plural(questions.changed, 'effort')} changed")
    _render_left(judge, questions, "question", "named no effort: the classified effort is kept")
    if technical is not None:
        click.echo(_tally_line("technical", technical, "unscored agent"))
        _render_left(
            judge, technical, "agent", "gave no score in [0, 1]: those agents stay unscored"
        )
        if technical.no_output:
            click.echo(
                f"  {_plural(technical.no_output, 'agent')} without output to judge: unscored"
            )


def _render_left(judge: JudgeSettings, tally: Tally, word: str, unparseable: str) -> None:
    """The lines on what the judge left as it was, and why."""
    if tally.unparseable:
        click.echo(f"  {_plural(tally.unparseable, 'answer')} {unparseable}")
    if tally.cut_off:
        click.echo(
            f"  {_plural(tally.cut_off, 'answer')} of those stopped at ppp.judge.max_tokens"
            f" ({judge.max_tokens:,}) before it ended: not kept; a model that explains first"
            " needs a larger cap"
        )
    if tally.too_long:
        click.echo(
            f"  {_plural(tally.too_long, word)} skipped: the prompt is longer than the"
            " model's context"
        )
    if tally.taken:
        click.echo(
            f"  {_plural(tally.taken, word)} left to another judge run asking the same at"
            " the same time: judge again after it ends to read its answers from the cache"
        )


def _render_evaluation(judge: JudgeSettings, report: Report, evaluation: EvaluationReport) -> None:
    from ..core.model import Effort

    click.echo(
        f"judge {inline(judge.model)} on {_plural(evaluation.questions, 'labelled question')}"
        f" ({_plural(report.requests, 'request')}, {report.questions.cached:,} from the cache)"
    )
    click.echo(
        f"answered: {evaluation.answered:,} of {evaluation.questions:,}"
        + (f" ({evaluation.unparseable:,} named no effort)" if evaluation.unparseable else "")
    )
    if evaluation.judge is None or evaluation.classifier_on_answered is None:
        click.echo("the judge gave no effort: nothing to measure it by")
        click.echo(f"the classifier on all of them: accuracy {evaluation.classifier.accuracy:.3f}")
        return
    click.echo(f"on the {evaluation.answered:,} answered:")
    _figures(evaluation.judge, evaluation.classifier_on_answered)
    if evaluation.unparseable:
        click.echo(
            f"on all {evaluation.questions:,}, an unanswered one as the classifier's label"
            " (as judging keeps it):"
        )
        _figures(evaluation.judge_or_classifier, evaluation.classifier)
    click.echo(
        f"confusion on the {evaluation.answered:,} answered (rows: the label; columns: low,"
        " medium, high)"
    )
    click.echo(f"{'':<10}{'judge':<20}classifier")
    for expected in Effort:
        judged = "".join(f"{evaluation.judge.confusion[expected, p]:>6}" for p in Effort)
        ruled = "".join(
            f"{evaluation.classifier_on_answered.confusion[expected, p]:>6}" for p in Effort
        )
        click.echo(f"{expected.value:<10}{judged:<20}{ruled}")


def _figures(judged: Evaluation, ruled: Evaluation) -> None:
    click.echo(f"  {'':<10}{'judge':>10}{'classifier':>12}")
    click.echo(f"  {'accuracy':<10}{judged.accuracy:>10.3f}{ruled.accuracy:>12.3f}")
    click.echo(f"  {'macro F1':<10}{judged.macro_f1:>10.3f}{ruled.macro_f1:>12.3f}")
