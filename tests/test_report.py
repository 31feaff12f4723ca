"""`ppp-tui report`: one run as Markdown or one HTML page, its transcript text inert."""

from __future__ import annotations

import html
import json
import os
import stat
from html.parser import HTMLParser
from pathlib import Path

import pytest
from helpers import UNSAFE, run_cli
from markdown_it import MarkdownIt
from transcripts import ClaudeTranscript, write_lines

CWD = "/home/ana/shop"
ESCAPES = "\x1b]52;c;SGVsbG8=\x07\x1b[2J\x9b31m\u202e"
HOSTILE = f"<script>alert(1)</script> **bold** _it_ [b]x[/b] [l](http://e.x) ~~s~~ | {ESCAPES}"
FENCE = "````"
DIFF_TEXT = f"{FENCE}\n</details>\n<script>alert(2)</script>\n```\n{ESCAPES}red\n"


def _hostile_db(tmp_path: Path) -> Path:
    """A run of one Claude Code session whose prompt, question, options, answer, file
    name and file text are all hostile."""
    claude = ClaudeTranscript()
    claude.prompt(f"Fix the export. {HOSTILE}\n    indented\n1. listed\n# heading")
    question = f"Which format? {HOSTILE}"
    ask = {
        "questions": [
            {
                "question": question,
                "header": "Format",
                "options": [
                    {"label": "<b>JSON</b>", "description": "x"},
                    {"label": "`CSV`|TSV", "description": "y"},
                ],
                "multiSelect": False,
            }
        ]
    }
    asked = claude.call("AskUserQuestion", ask)
    answer = "<img src=x onerror=alert(3)>"
    claude.result(
        asked,
        f'User has answered your questions: "{question}"="{answer}". You can now continue'
        " with the user's answers in mind.",
        {"questions": ask["questions"], "answers": {question: answer}},
    )
    path = f"{CWD}/app/<script>{ESCAPES}.py"
    written = claude.call("Write", {"file_path": path, "content": DIFF_TEXT})
    claude.result(written, "File created successfully", {"type": "create"})
    claude.say("Done.")
    db = tmp_path / "runs.db"
    result = run_cli(
        "import", str(write_lines(tmp_path / "c1.jsonl", claude.lines)), "--db", str(db)
    )
    assert result.exit_code == 0, result.output
    assert run_cli("prefer", "session-", "claude-code", "--db", str(db)).exit_code == 0
    return db


def _report(db: Path, *args: str) -> str:
    result = run_cli("report", "session-", "--db", str(db), *args)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_markdown_report_renders_transcript_text_as_itself(tmp_path: Path) -> None:
    db = _hostile_db(tmp_path)
    text = _report(db)
    assert not UNSAFE.search(text)
    assert "## Task\n" in text and "## Changes\n" in text and "## Marks\n" in text
    # the diff's fence is longer than any backtick run inside it
    assert "\n`````diff\n# turn 1\n" in text and "\n`````\n" in text
    rendered = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(text)
    for markup in ("<script", "<a ", "<img", "<em>", "<s>", "<b>"):
        assert markup not in rendered, markup
    assert rendered.count("<strong>") == 4  # the report's own labels only
    assert rendered.count("<details>") == 1 and rendered.count("</details>") == 1
    shown = html.unescape(rendered)
    assert "<script>alert(1)</script> **bold** _it_ [b]x[/b] [l](http://e.x) ~~s~~ |" in shown
    assert "␛]52;c;SGVsbG8=␇␛[2J\\x9b31m<U+202E>" in shown
    assert "<img src=x onerror=alert(3)>" in shown  # the answer, as text
    assert "<b>JSON</b> | `CSV`|TSV" in shown  # the options, as text
    assert "+</details>\n+<script>alert(2)</script>" in shown  # inside the diff's block


class _Page(HTMLParser):
    """The tags, attributes and text of an HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes.extend(name for name, _ in attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_the_html_report_is_one_inert_page_with_nothing_to_fetch(tmp_path: Path) -> None:
    db = _hostile_db(tmp_path)
    page_text = _report(db, "--html")
    assert not UNSAFE.search(page_text)
    page = _Page()
    page.feed(page_text)
    page.close()
    assert page.tags.count("script") == 0 and page.tags.count("style") == 1
    for tag in ("link", "img", "iframe", "object", "embed", "a", "base", "form"):
        assert tag not in page.tags, tag
    assert not {"src", "href", "onerror", "onload", "action"} & set(page.attributes)
    assert page.tags.count("details") == 1
    text = "".join(page.text)
    assert "<script>alert(1)</script> **bold**" in text
    assert "<img src=x onerror=alert(3)>" in text
    assert "+</details>\n+<script>alert(2)</script>" in text
    assert "url(" not in page_text and "@import" not in page_text


def test_a_report_says_each_agents_scores_questions_changes_and_marks(tmp_path: Path) -> None:
    db = _hostile_db(tmp_path)
    text = _report(db)
    scores = text.split("## Scores and rank\n")[1].split("##")[0]
    assert "| 1 | claude-code | claude-opus-4-5 | — (unscored) |" in scores
    questions = text.split("## Questions\n")[1].split("## Changes")[0]
    assert questions.count("| 1 | Which format? \\<script\\>alert(1)\\</script\\>") == 1
    assert (
        "| with the tool | \\<b\\>JSON\\</b\\> \\| \\`CSV\\`\\|TSV"
        " | \\<img src=x onerror=alert(3)\\> | 1 min 0 s | medium (classified) |"
    ) in questions
    changes = text.split("## Changes\n")[1].split("## Marks")[0]
    assert "| +5 | -0 | 1 |" in changes
    assert "| tester | claude-code |" in text.split("## Marks\n")[1]


def test_report_o_replaces_a_file_whole_and_refuses_a_folder_or_a_fifo(tmp_path: Path) -> None:
    db = _hostile_db(tmp_path)
    target = tmp_path / "out" / "report.md"
    target.parent.mkdir()
    target.write_text("an older report\n", encoding="utf-8")
    os.chmod(target, 0o640)
    result = run_cli("report", "session-", "--db", str(db), "-o", str(target))
    assert result.exit_code == 0 and result.stdout == ""  # the note goes to standard error
    assert target.read_text(encoding="utf-8") == _report(db)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.md"]  # nothing left over
    folder = run_cli("report", "session-", "--db", str(db), "-o", str(tmp_path / "out"))
    assert folder.exit_code == 1
    assert folder.output.strip().endswith("a directory, not a file; nothing written")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    refused = run_cli("report", "session-", "--db", str(db), "--html", "-o", str(fifo))
    assert refused.exit_code == 1 and len(refused.output.strip().splitlines()) == 1
    assert "a named pipe (FIFO)" in refused.output
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    missing = run_cli("report", "session-", "--db", str(db), "-o", str(tmp_path / "no" / "r.md"))
    assert missing.exit_code == 1 and "cannot write" in missing.output


@pytest.mark.parametrize("fmt", ["--markdown", "--html"])
def test_a_run_without_sessions_reports_too(db: Path, fmt: str) -> None:
    runs = json.loads(run_cli("runs", "--json", "--db", str(db)).output)
    text = (
        _report(db, fmt) if False else run_cli("report", runs[0]["id"], "--db", str(db), fmt).output
    )
    assert "No agent changed a file" in text
