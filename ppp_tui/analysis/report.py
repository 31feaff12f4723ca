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
from typing import Protocol

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


class _Writer(Protocol):
    """How one format writes the report's parts; `data` makes text from a transcript
    safe to place in a heading."""

    def heading(self, level: int, text: str) -> str: ...
    def facts(self, facts: list[tuple[str, str]]) -> str: ...
    def text(self, text: str) -> str: ...
    def note(self, text: str) -> str: ...
    def table(self, heads: list[str], rows: list[list[str]]) -> str: ...
    def folded(self, change: FileChange, diffs: str) -> str: ...
    def data(self, text: str) -> str: ...


def _body(report: Report, writer: _Writer) -> Iterator[str]:
    """The report's parts after its title, in order, as `writer` writes them."""
    run, ranking = report.run, report.ranking
    yield writer.facts(
        [
            ("Stage", run.stage or "none"),
            ("Created", run.created_at or "unknown"),
            ("Weights", _weights(ranking)),
            ("Best agent", ranking.best_agent if ranking.agents else "none"),
        ]
    )
    yield writer.heading(2, "Task")
    yield writer.text(run.task) if run.task else writer.note("No task text.")
    yield writer.heading(2, "Scores and rank")
    yield writer.table(_SCORE_HEADS, [_score_cells(a, s) for a, s in _ranked(report)])
    yield writer.heading(2, "Questions")
    asked = list(_questions(report))
    if not asked:
        yield writer.note("No agent asked a question.")
    for agent, questions in asked:
        yield writer.heading(3, writer.data(agent.name))
        yield writer.table(_QUESTION_HEADS, [_question_cells(q) for q in questions])
    yield writer.heading(2, "Changes")
    if not report.files:
        yield writer.note("No agent changed a file.")
    for agent in run.agents:
        if agent.name not in report.files:
            continue
        yield writer.heading(3, writer.data(agent.name))
        yield writer.table(_FILE_HEADS, _file_cells(report.files[agent.name]))
        for change, diffs in _file_diffs(report, agent.name):
            yield writer.folded(change, diffs)
    yield writer.heading(2, "Marks")
    if report.marks:
        rows = [[shown(who), agent] for who, agent in sorted(report.marks.items())]
        yield writer.table(["Reviewer", "Preferred agent"], rows)
    else:
        yield writer.note("No reviewer has marked this run.")


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


class _Markdown:
    """How the report's parts are written in Markdown."""

    def heading(self, level: int, text: str) -> str:
        return f"{'#' * level} {text}\n"

    def facts(self, facts: list[tuple[str, str]]) -> str:
        return "\n".join(f"- **{name}:** {md(value)}" for name, value in facts) + "\n"

    def text(self, text: str) -> str:
        return fenced(text, "text")

    def note(self, text: str) -> str:
        return f"{text}\n"

    def table(self, heads: list[str], rows: list[list[str]]) -> str:
        lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
        lines.extend("| " + " | ".join(md(cell) for cell in row) + " |" for row in rows)
        return "\n".join(lines) + "\n"

    def folded(self, change: FileChange, diffs: str) -> str:
        return (
            "<details>\n"
            f"<summary>{html.escape(_file_summary(change))}</summary>\n\n"
            f"{fenced(diffs, 'diff')}\n"
            "</details>\n"
        )

    def data(self, text: str) -> str:
        return md(text)


def markdown(report: Report) -> str:
    """The report as Markdown."""
    writer = _Markdown()
    return "\n".join([writer.heading(1, f"Run {md(report.run.id)}"), *_body(report, writer)])


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


class _Html:
    """How the report's parts are written in HTML."""

    def heading(self, level: int, text: str) -> str:
        return f"<h{level}>{text}</h{level}>"

    def facts(self, facts: list[tuple[str, str]]) -> str:
        items = "\n".join(f"<dt>{name}</dt><dd>{h(value)}</dd>" for name, value in facts)
        return f"<dl>\n{items}\n</dl>"

    def text(self, text: str) -> str:
        return f'<pre class="text">{html.escape(literal(text), quote=True)}</pre>'

    def note(self, text: str) -> str:
        return f"<p>{text}</p>"

    def table(self, heads: list[str], rows: list[list[str]]) -> str:
        head = "".join(f"<th>{html.escape(cell)}</th>" for cell in heads)
        body = "".join(
            "<tr>" + "".join(f"<td>{h(cell)}</td>" for cell in row) + "</tr>\n" for row in rows
        )
        return f"<table>\n<tr>{head}</tr>\n{body}</table>\n"

    def folded(self, change: FileChange, diffs: str) -> str:
        return (
            f"<details><summary>{h(_file_summary(change))}</summary>{_diff_html(diffs)}</details>"
        )

    def data(self, text: str) -> str:
        return h(text)


def html_page(report: Report) -> str:
    """The report as one HTML page: its style inline, nothing fetched."""
    writer = _Html()
    title = h(f"Run {report.run.id}")
    head = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        '<head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{title}</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
        writer.heading(1, title),
    ]
    return "\n".join([*head, *_body(report, writer), "</body>", "</html>", ""])


def render(report: Report, fmt: str) -> str:
    """The report as `fmt`: markdown or html."""
    return html_page(report) if fmt == "html" else markdown(report)
