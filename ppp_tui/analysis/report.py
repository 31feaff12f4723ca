"""One run as a report to share: Markdown, or one self-contained HTML page.

The task; each agent's scores and rank under the current weights; every question with
how it was asked, its options, the answer (or the dismissal) and the time taken; each
agent's changes of files, their diffs folded under `<details>`; and each reviewer's mark.

Text from transcripts is data, never markup: every control character becomes a visible
stand-in (safe_text.py); in Markdown every character that could be markup within a line
is escaped with a backslash (shown as itself), and longer texts and diffs sit in fenced
blocks whose fence is longer than any run of backticks in them; in HTML everything is
escaped with html.escape. The page has its style inline and nothing to fetch: no
script, no link, no image.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..core.model import Agent, AskedWith, Edit, Question, Run
from ..core.scoring import AgentScore, Ranking, rank_run
from ..core.sessions.changes import FileChange
from ..core.settings import Settings
from ..safe_text import literal, number
from ..storage.changes import changed_files, run_edits
from ..storage.reviewers import shown
from ..storage.store import Store
from .describe import effort_source, seconds_text, technical_text

FORMATS = ("markdown", "html")
# What Markdown (GitHub's too) may read as markup inside a line: emphasis, code, links,
# HTML and entities, table cells, strikethrough, maths, a heading's closing #s. A
# backslash makes each literal.
_MARKUP = re.compile(r"([\\`*_\[\]<>#|~&$])")
_BACKTICKS = re.compile(r"`+")


@dataclass(frozen=True)
class Report:
    """What a report of one run says."""

    run: Run
    ranking: Ranking
    marks: dict[str, str]  # reviewer -> the agent they marked
    files: dict[str, list[FileChange]]  # agent -> its changed files
    edits: dict[str, list[Edit]]  # agent -> its edits, in order


def load_report(store: Store, run_id: str, settings: Settings) -> Report:
    """The report of run `run_id` (an id, as `resolve_run_id` gives it)."""
    run = store.get_run(run_id)
    edits: dict[str, list[Edit]] = {}
    for name, edit in run_edits(store, run_id):
        edits.setdefault(name, []).append(edit)
    return Report(
        run,
        rank_run(run, settings),
        store.current_marks(run_id),
        changed_files(store, run_id),
        edits,
    )


# -- what both formats say ---------------------------------------------------------


def _one_line(text: str | None) -> str:
    """Data on one line: controls shown, white space folded."""
    return literal(text or "", one_line=True)


def _weights(ranking: Ranking) -> str:
    weights = ranking.weights
    text = f"technical {weights.technical:.2f}"
    if weights.proactivity == weights.personalization:
        return f"{text}, interaction {weights.proactivity:.2f}"
    return (
        f"{text}, proactivity {weights.proactivity:.2f},"
        f" personalization {weights.personalization:.2f}"
    )


def _ranked(report: Report) -> list[tuple[Agent, AgentScore | None]]:
    place = {score.name: score.rank for score in report.ranking.agents}
    agents = sorted(report.run.agents, key=lambda a: place.get(a.name, len(place) + 1))
    return [(agent, report.ranking.agent(agent.name)) for agent in agents]


def _score_cells(agent: Agent, score: AgentScore | None) -> list[str]:
    models = ", ".join(agent.models) or agent.model or ""
    return [
        str(score.rank) if score else "—",
        _one_line(agent.name),
        _one_line(models),
        technical_text(agent),
        number(score.r_proact, signed=True) if score else "—",
        number(score.r_pers, signed=True) if score else "—",
        number(score.final) if score else "—",
    ]


_SCORE_HEADS = ["Rank", "Agent", "Models", "Technical", "R_Proact", "R_Pers", "Final"]
_QUESTION_HEADS = ["Turn", "Question", "Asked", "Options", "Answer", "Time", "Effort"]


def _question_cells(question: Question) -> list[str]:
    tool = question.asked_with is AskedWith.TOOL
    if question.dismissed:
        answer = "dismissed"
    elif question.answer is not None:
        answer = _one_line(question.answer)
    else:
        answer = "no answer" if tool else "—"
    seconds = question.seconds_to_answer
    return [
        str(question.turn) if question.turn is not None else "—",
        _one_line(question.text),
        "with the tool" if tool else "in text",
        " | ".join(_one_line(option) for option in question.options) or "—",
        answer,
        seconds_text(seconds) if seconds is not None else "—",
        f"{question.effort.value} ({effort_source(question)})",
    ]


def _questions(report: Report) -> Iterator[tuple[Agent, tuple[Question, ...]]]:
    for agent in report.run.agents:
        questions = agent.trajectory.questions if agent.trajectory else ()
        if questions:
            yield agent, questions


def _file_diffs(report: Report, agent: str) -> Iterator[tuple[FileChange, str]]:
    """Each changed file of `agent` with the diffs of its edits, in order."""
    by_path: dict[str, list[str]] = {}
    for edit in report.edits.get(agent, []):
        by_path.setdefault(edit.path, []).append(f"# turn {edit.turn}\n{edit.diff}")
    for change in report.files.get(agent, []):
        yield change, "".join(by_path.get(change.path, []))


_FILE_HEADS = ["File", "Added", "Removed", "Edits"]


def _file_cells(files: Sequence[FileChange]) -> list[list[str]]:
    """A row for each changed file: its path and counts (both renderers)."""
    return [[c.path, f"+{c.added}", f"-{c.removed}", str(c.edits)] for c in files]


def _file_summary(change: FileChange) -> str:
    edits = "edit" if change.edits == 1 else "edits"
    return f"{_one_line(change.path)} (+{change.added} -{change.removed}, {change.edits} {edits})"


# -- Markdown ---------------------------------------------------------------------


def md(text: str) -> str:
    """Text shown as itself in Markdown, on one line, with every character that could be
    markup escaped. Always placed after text of ours (a table's `| `, a heading's `#`),
    never at the start of a line, where `1.`, `-` or `>` would start a block."""
    return _MARKUP.sub(r"\\\1", _one_line(text))


def fenced(text: str, info: str = "") -> str:
    """`text` in a fenced block whose fence is longer than any backtick run inside."""
    shown = literal(text).rstrip("\n")
    longest = max((len(run) for run in _BACKTICKS.findall(shown)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{shown}\n{fence}\n"


def _md_table(heads: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    lines.extend("| " + " | ".join(md(cell) for cell in row) + " |" for row in rows)
    return "\n".join(lines) + "\n"


def markdown(report: Report) -> str:
    """The report as Markdown."""
    run, ranking = report.run, report.ranking
    out = [f"# Run {md(run.id)}\n"]
    facts = [
        ("Stage", run.stage or "none"),
        ("Created", run.created_at or "unknown"),
        ("Weights", _weights(ranking)),
        ("Best agent", ranking.best_agent if ranking.agents else "none"),
    ]
    out.append("\n".join(f"- **{name}:** {md(value)}" for name, value in facts) + "\n")
    out.append("## Task\n")
    out.append(fenced(run.task, "text") if run.task else "No task text.\n")
    out.append("## Scores and rank\n")
    out.append(_md_table(_SCORE_HEADS, [_score_cells(a, s) for a, s in _ranked(report)]))
    out.append("## Questions\n")
    asked = list(_questions(report))
    if not asked:
        out.append("No agent asked a question.\n")
    for agent, questions in asked:
        out.append(f"### {md(agent.name)}\n")
        out.append(_md_table(_QUESTION_HEADS, [_question_cells(q) for q in questions]))
    out.append("## Changes\n")
    if not report.files:
        out.append("No agent changed a file.\n")
    for agent in run.agents:
        if agent.name not in report.files:
            continue
        out.append(f"### {md(agent.name)}\n")
        files = report.files[agent.name]
        out.append(_md_table(_FILE_HEADS, _file_cells(files)))
        for change, diffs in _file_diffs(report, agent.name):
            out.append(
                "<details>\n"
                f"<summary>{html.escape(_file_summary(change))}</summary>\n\n"
                f"{fenced(diffs, 'diff')}\n"
                "</details>\n"
            )
    out.append("## Marks\n")
    if report.marks:
        rows = [[shown(who), agent] for who, agent in sorted(report.marks.items())]
        out.append(_md_table(["Reviewer", "Preferred agent"], rows))
    else:
        out.append("No reviewer has marked this run.\n")
    return "\n".join(out)


# -- HTML -------------------------------------------------------------------------

_STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; margin: 2em auto; max-width: 70em;
  padding: 0 1em; color: #1f2328; background: #fff; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #d0d7de; padding: 0.25em 0.6em; text-align: left;
  vertical-align: top; }
th { background: #f6f8fa; }
pre { background: #f6f8fa; padding: 0.6em; overflow-x: auto; white-space: pre-wrap;
  word-break: break-all; }
summary { cursor: pointer; font-family: monospace; }
.add { color: #116329; background: #dafbe1; }
.del { color: #82071e; background: #ffebe9; }
.hunk { color: #0550ae; }
.note { color: #6e7781; }
"""


def h(text: str) -> str:
    """Data as HTML text on one line."""
    return html.escape(_one_line(text), quote=True)


def _html_table(heads: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in heads)
    body = "".join(
        "<tr>" + "".join(f"<td>{h(cell)}</td>" for cell in row) + "</tr>\n" for row in rows
    )
    return f"<table>\n<tr>{head}</tr>\n{body}</table>\n"


def _diff_html(text: str) -> str:
    lines = []
    for line in literal(text).split("\n"):
        escaped = html.escape(line, quote=True)
        if line.startswith(("--- ", "+++ ")):
            lines.append(f"<b>{escaped}</b>")
        elif line.startswith("@@"):
            lines.append(f'<span class="hunk">{escaped}</span>')
        elif line.startswith("+"):
            lines.append(f'<span class="add">{escaped}</span>')
        elif line.startswith("-"):
            lines.append(f'<span class="del">{escaped}</span>')
        elif line.startswith(("\\", "#")):
            lines.append(f'<span class="note">{escaped}</span>')
        else:
            lines.append(escaped)
    return '<pre class="diff">' + "\n".join(lines).rstrip("\n") + "</pre>"


def html_page(report: Report) -> str:
    """The report as one HTML page: its style inline, nothing fetched."""
    run, ranking = report.run, report.ranking
    title = h(f"Run {run.id}")
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        '<head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{title}</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
        f"<h1>{title}</h1>",
        "<dl>",
    ]
    facts = [
        ("Stage", run.stage or "none"),
        ("Created", run.created_at or "unknown"),
        ("Weights", _weights(ranking)),
        ("Best agent", ranking.best_agent if ranking.agents else "none"),
    ]
    out.extend(f"<dt>{name}</dt><dd>{h(value)}</dd>" for name, value in facts)
    out.append("</dl>")
    out.append("<h2>Task</h2>")
    task = html.escape(literal(run.task or ""), quote=True)
    out.append(f'<pre class="text">{task}</pre>' if run.task else "<p>No task text.</p>")
    out.append("<h2>Scores and rank</h2>")
    out.append(_html_table(_SCORE_HEADS, [_score_cells(a, s) for a, s in _ranked(report)]))
    out.append("<h2>Questions</h2>")
    asked = list(_questions(report))
    if not asked:
        out.append("<p>No agent asked a question.</p>")
    for agent, questions in asked:
        out.append(f"<h3>{h(agent.name)}</h3>")
        out.append(_html_table(_QUESTION_HEADS, [_question_cells(q) for q in questions]))
    out.append("<h2>Changes</h2>")
    if not report.files:
        out.append("<p>No agent changed a file.</p>")
    for agent in run.agents:
        if agent.name not in report.files:
            continue
        out.append(f"<h3>{h(agent.name)}</h3>")
        files = report.files[agent.name]
        out.append(_html_table(_FILE_HEADS, _file_cells(files)))
        for change, diffs in _file_diffs(report, agent.name):
            out.append(
                f"<details><summary>{h(_file_summary(change))}</summary>"
                f"{_diff_html(diffs)}</details>"
            )
    out.append("<h2>Marks</h2>")
    if report.marks:
        rows = [[shown(who), agent] for who, agent in sorted(report.marks.items())]
        out.append(_html_table(["Reviewer", "Preferred agent"], rows))
    else:
        out.append("<p>No reviewer has marked this run.</p>")
    out.extend(["</body>", "</html>", ""])
    return "\n".join(out)


def render(report: Report, fmt: str) -> str:
    """The report as `fmt`: markdown or html."""
    return html_page(report) if fmt == "html" else markdown(report)
