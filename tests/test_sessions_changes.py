"""Agents' changes of files, read from their edit tool calls (docs/sessions.md, "Changes").

Each transcript is written the way its tool writes it: Claude Code's tool_use and
tool_result lines with their `toolUseResult` (structuredPatch, originalFile, type create
or update), Codex's rollout with apply_patch as a custom tool, a function or a shell
heredoc and its `patch_apply_end` event, and Gemini CLI's ConversationRecord with its
ToolCallRecords (resultDisplay FileDiff, status). The counts expected are difflib's.
"""

from __future__ import annotations

import difflib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from helpers import UNSAFE, run_cli
from transcripts import ClaudeTranscript, structured_patch, write_lines

from ppp_tui.cli import cli

TASK = "Add a --json flag to the export command."
CWD = "/home/ana/shop"


def _counts(old: str, new: str) -> tuple[int, int]:
    """(added, removed) of difflib's unified diff of two texts."""
    diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm=""))[2:]
    added = sum(1 for line in diff if line.startswith("+"))
    return added, sum(1 for line in diff if line.startswith("-"))


def _show(db: Path) -> dict[str, Any]:
    runs = json.loads(run_cli("runs", "--json", "--db", str(db)).output)
    assert len(runs) == 1
    document: dict[str, Any] = json.loads(
        run_cli("show", runs[0]["id"], "--json", "--db", str(db)).output
    )
    return document


def _changes(db: Path) -> dict[str, list[tuple[str, int, int]]]:
    return {
        agent["name"]: [(c["path"], c["added"], c["removed"]) for c in agent["changes"]]
        for agent in _show(db)["agents"]
    }


def _import(db: Path, *files: Path) -> Result:
    result = run_cli("import", *map(str, files), "--db", str(db))
    assert result.exit_code == 0, result.output
    return result


# -- Claude Code ------------------------------------------------------------------

APP_BEFORE = "import json\n\n\ndef export(rows):\n    return rows\n"
APP_AFTER = (
    "import json\n\n\ndef export(rows, as_json=False):\n"
    "    if as_json:\n        return json.dumps(rows)\n    return rows\n"
)
CLI_TEXT = "import click\n\n\n@click.command()\ndef main():\n    pass\n"


def test_claude_codes_edits_writes_and_multi_edits_are_its_changes(tmp_path: Path) -> None:
    claude = ClaudeTranscript()
    claude.prompt(TASK)
    claude.edit(
        f"{CWD}/app/export.py",
        APP_BEFORE,
        "def export(rows):\n    return rows\n",
        APP_AFTER.split("\n\n\n")[1],
    )
    created = claude.call("Write", {"file_path": f"{CWD}/app/cli.py", "content": CLI_TEXT})
    claude.result(
        created,
        f"File created successfully at: {CWD}/app/cli.py",
        {
            "type": "create",
            "filePath": f"{CWD}/app/cli.py",
            "content": CLI_TEXT,
            "structuredPatch": [],
            "originalFile": None,
        },
    )
    claude.prompt("Also add a --pretty flag.")
    multi_args = {
        "file_path": f"{CWD}/app/cli.py",
        "edits": [
            {
                "old_string": "@click.command()\n",
                "new_string": '@click.command()\n@click.option("--pretty", is_flag=True)\n',
                "replace_all": False,
            },
            {"old_string": "def main():", "new_string": "def main(pretty):", "replace_all": False},
        ],
    }
    cli_after = CLI_TEXT.replace(
        "@click.command()\n", '@click.command()\n@click.option("--pretty", is_flag=True)\n'
    ).replace("def main():", "def main(pretty):")
    multi = claude.call("MultiEdit", multi_args)
    claude.result(
        multi,
        f"Applied 2 edits to {CWD}/app/cli.py",
        {
            "filePath": f"{CWD}/app/cli.py",
            "edits": multi_args["edits"],
            "originalFileContents": CLI_TEXT,
            "structuredPatch": structured_patch(CLI_TEXT, cli_after),
            "userModified": False,
        },
    )
    readme_old, readme_new = "# Shop\n\nExport rows.\n", "# Shop\n\nExport rows, as JSON too.\n"
    rewrite = claude.call("Write", {"file_path": "/tmp/notes/README.md", "content": readme_new})
    claude.result(
        rewrite,
        "The file /tmp/notes/README.md has been updated.",
        {
            "type": "update",
            "filePath": "/tmp/notes/README.md",
            "content": readme_new,
            "structuredPatch": structured_patch(readme_old, readme_new),
            "originalFile": readme_old,
        },
    )
    claude.say("Done.")
    db = tmp_path / "runs.db"
    _import(db, write_lines(tmp_path / "c1.jsonl", claude.lines))
    assert _changes(db) == {
        "claude-code": [
            ("app/export.py", *_counts(APP_BEFORE, APP_AFTER)),
            ("app/cli.py", 6 + _counts(CLI_TEXT, cli_after)[0], _counts(CLI_TEXT, cli_after)[1]),
            ("/tmp/notes/README.md", 1, 1),
        ]
    }
    diff = run_cli("diff", "session-", "--db", str(db)).output
    assert (
        "# claude-code, turn 1\n--- a/app/export.py\n+++ b/app/export.py\n@@ -1,5 +1,7 @@" in diff
    )
    assert "# claude-code, turn 2\n--- a/app/cli.py\n+++ b/app/cli.py\n" in diff
    assert "--- /tmp/notes/README.md\n+++ /tmp/notes/README.md\n" in diff
    assert '+@click.option("--pretty", is_flag=True)' in diff
    assert "+    if as_json:" in diff and "-def export(rows):" in diff


def test_a_failed_rejected_or_unanswered_claude_edit_changed_nothing(tmp_path: Path) -> None:
    claude = ClaudeTranscript()
    claude.prompt(TASK)
    missing = claude.call(
        "Edit", {"file_path": f"{CWD}/a.py", "old_string": "nope", "new_string": "x"}
    )
    claude.result(
        missing,
        "<tool_use_error>String to replace not found in file.\nString: nope</tool_use_error>",
        "Error: String to replace not found in file.\nString: nope",
        error=True,
    )
    rejected = claude.call("Write", {"file_path": f"{CWD}/b.py", "content": "x = 1\n"})
    claude.result(
        rejected,
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg."
        " if it was a file edit, the new_string was NOT written to the file).",
        "User rejected tool use",
        error=True,
    )
    unread = claude.call("Write", {"file_path": f"{CWD}/c.py", "content": "y = 2\n"})
    claude.result(
        unread,
        "<tool_use_error>File has not been read yet. Read it first before writing to it."
        "</tool_use_error>",
        "Error: File has not been read yet. Read it first before writing to it.",
        error=True,
    )
    claude.call("Write", {"file_path": f"{CWD}/d.py", "content": "z = 3\n"})  # no result yet
    db = tmp_path / "runs.db"
    _import(db, write_lines(tmp_path / "c1.jsonl", claude.lines))
    assert _changes(db) == {"claude-code": []}
    assert "no changes" in run_cli("diff", "session-", "--db", str(db)).output


def test_an_older_claude_edit_without_its_files_text_is_read_from_its_arguments(
    tmp_path: Path,
) -> None:
    claude = ClaudeTranscript()
    claude.prompt(TASK)
    tool_id = claude.call(
        "Edit",
        {"file_path": f"{CWD}/a.py", "old_string": "a = 1\nb = 2\n", "new_string": "a = 1\n"},
    )
    claude.result(tool_id, f"The file {CWD}/a.py has been updated successfully.", None)
    written = claude.call("Write", {"file_path": f"{CWD}/b.py", "content": "one\ntwo\n"})
    claude.result(written, f"The file {CWD}/b.py has been updated successfully.", None)
    db = tmp_path / "runs.db"
    _import(db, write_lines(tmp_path / "c1.jsonl", claude.lines))
    assert _changes(db) == {"claude-code": [("a.py", 0, 1), ("b.py", 2, 0)]}
    diff = run_cli("diff", "session-", "--db", str(db)).output
    assert "\\ the file's earlier text is not in the transcript" in diff


def test_a_notebook_edit_reads_the_cells_text_before_from_the_notebook(tmp_path: Path) -> None:
    notebook = {"cells": [{"id": "c7", "cell_type": "code", "source": ["x = 1\n", "y = 2"]}]}
    claude = ClaudeTranscript()
    claude.prompt(TASK)
    tool_id = claude.call(
        "NotebookEdit",
        {"notebook_path": f"{CWD}/nb.ipynb", "cell_id": "c7", "new_source": "x = 1\ny = 3\nz = 4"},
    )
    claude.result(
        tool_id,
        "Updated cell c7 with x = 1 ...",
        {
            "new_source": "x = 1\ny = 3\nz = 4",
            "cell_id": "c7",
            "cell_type": "code",
            "language": "python",
            "edit_mode": "replace",
            "notebook_path": f"{CWD}/nb.ipynb",
            "original_file": json.dumps(notebook),
        },
    )
    db = tmp_path / "runs.db"
    _import(db, write_lines(tmp_path / "c1.jsonl", claude.lines))
    assert _changes(db) == {"claude-code": [("nb.ipynb", 2, 1)]}


def test_a_sub_agents_edits_count_for_its_parent_session(tmp_path: Path) -> None:
    main = ClaudeTranscript("parent")
    main.prompt(TASK)
    main.say("I'll ask a sub-agent to write the tests.")
    sub = ClaudeTranscript("parent")
    sub.base = {**sub.base, "isSidechain": True, "agentId": "a1b2"}
    sub.prompt("Write tests for export.")
    created = sub.call("Write", {"file_path": f"{CWD}/tests/test_export.py", "content": "x\n"})
    sub.result(created, "File created successfully", {"type": "create", "content": "x\n"})
    folder = tmp_path / "proj"
    write_lines(folder / "parent.jsonl", main.lines)
    write_lines(folder / "parent" / "subagents" / "agent-a1b2.jsonl", sub.lines)
    db = tmp_path / "runs.db"
    _import(db, folder)
    assert _changes(db) == {"claude-code": [("tests/test_export.py", 1, 0)]}


# -- Codex CLI --------------------------------------------------------------------

PATCH = """*** Begin Patch
*** Add File: app/json_export.py
+import json
+
+
+def dump(rows):
+    return json.dumps(rows)
*** Update File: app/export.py
@@ def export(rows):
-    return rows
+    return list(rows)
*** Delete File: app/old_export.py
*** Update File: docs/usage.txt
*** Move to: docs/usage.md
@@
 Usage
-=====
+-----
*** End Patch"""


class Codex:
    """A Codex rollout, line by line (the envelope layout)."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.n = 0
        self._add(
            "session_meta",
            {
                "id": "0199aaaa-0000-7000-8000-000000000001",
                "timestamp": "2026-03-02T10:00:00.000Z",
                "cwd": CWD,
                "originator": "codex_cli_rs",
                "cli_version": "0.63.0",
            },
        )
        self._add("turn_context", {"cwd": CWD, "model": "gpt-5.1-codex"})
        self._add(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": TASK}]},
        )
        self._add("event_msg", {"type": "user_message", "message": TASK, "images": []})

    def _add(self, kind: str, payload: dict[str, Any]) -> None:
        self.n += 1
        self.lines.append(
            {"timestamp": f"2026-03-02T10:00:{self.n:02d}.000Z", "type": kind, "payload": payload}
        )

    def item(self, **payload: Any) -> None:
        self._add("response_item", payload)

    def event(self, **payload: Any) -> None:
        self._add("event_msg", payload)


def _exec_output(text: str, code: int = 0) -> str:
    return json.dumps({"output": text, "metadata": {"exit_code": code, "duration_seconds": 0.1}})


def test_codex_patches_are_read_however_the_rollout_carries_them(tmp_path: Path) -> None:
    codex = Codex()
    # 1. the freeform apply_patch tool, confirmed by its event and its output
    codex.item(
        type="custom_tool_call", status="completed", call_id="c1", name="apply_patch", input=PATCH
    )
    codex.event(
        type="patch_apply_end",
        call_id="c1",
        turn_id="1",
        success=True,
        stdout="Success. Updated the following files:\nA app/json_export.py\n",
        stderr="",
        changes={},
    )
    codex.item(
        type="custom_tool_call_output",
        call_id="c1",
        output="Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the"
        " following files:\nA app/json_export.py\nM app/export.py\nD app/old_export.py\n",
    )
    # 2. a shell heredoc after `cd`
    heredoc = (
        "cd app && apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: export.py\n"
        "@@\n-    return list(rows)\n+    return [dict(r) for r in rows]\n"
        "*** End Patch\nEOF\n"
    )
    codex.item(
        type="function_call",
        name="shell",
        call_id="c2",
        arguments=json.dumps({"command": ["bash", "-lc", heredoc], "workdir": CWD}),
    )
    codex.item(
        type="function_call_output",
        call_id="c2",
        output=_exec_output("Success. Updated the following files:\nM export.py\n"),
    )
    # 3. the function form, with the patch as its `input`
    codex.item(
        type="function_call",
        name="apply_patch",
        call_id="c3",
        arguments=json.dumps({"input": "*** Begin Patch\n*** Add File: NOTES\n+n\n*** End Patch"}),
    )
    codex.item(type="function_call_output", call_id="c3", output=_exec_output("Success."))
    # 4. apply_patch as a direct argument list (the local shell tool)
    codex.item(
        type="local_shell_call",
        call_id="c4",
        status="completed",
        action={
            "type": "exec",
            "command": [
                "apply_patch",
                "*** Begin Patch\n*** Add File: VERSION\n+1.0\n*** End Patch\n",
            ],
        },
    )
    codex.item(type="function_call_output", call_id="c4", output=_exec_output("Success."))
    # 5. a patch applied from a script: only its event tells
    codex.event(
        type="patch_apply_end",
        call_id="exec-7",
        turn_id="1",
        success=True,
        stdout="",
        stderr="",
        changes={
            f"{CWD}/setup.cfg": {
                "type": "update",
                "unified_diff": "@@ -3,3 +3,3 @@\n [x]\n-a = 1\n+a = 2\n b = 3\n",
                "move_path": None,
            }
        },
    )
    db = tmp_path / "runs.db"
    _import(db, write_lines(tmp_path / "rollout-2026-03-02T10-00-00-0199aaaa.jsonl", codex.lines))
    assert _changes(db) == {
        "codex": [
            ("app/json_export.py", 5, 0),
            ("app/export.py", 2, 2),
            ("app/old_export.py", 0, 0),
            ("docs/usage.md", 1, 1),
            ("NOTES", 1, 0),
            ("VERSION", 1, 0),
            ("setup.cfg", 1, 1),
        ]
    }
    diff = run_cli("diff", "session-", "--db", str(db), "--agent", "codex").output
    assert "--- a/docs/usage.txt\n+++ b/docs/usage.md\n" in diff
    assert "\\ the deleted file's text is not in the transcript" in diff
    assert "@@ -3,3 +3,3 @@\n [x]\n-a = 1\n+a = 2\n b = 3" in diff  # the event's line numbers
    assert "+    return [dict(r) for r in rows]" in diff


def test_a_codex_patch_that_did_not_apply_changed_nothing(tmp_path: Path) -> None:
    codex = Codex()
    add = "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch"
    codex.item(type="custom_tool_call", call_id="f1", name="apply_patch", input=add)
    codex.item(
        type="custom_tool_call_output",
        call_id="f1",
        output="apply_patch verification failed: Failed to find expected lines in a.txt",
    )
    codex.item(
        type="function_call",
        name="shell",
        call_id="f2",
        arguments=json.dumps({"command": ["apply_patch", add]}),
    )
    codex.item(
        type="function_call_output",
        call_id="f2",
        output=_exec_output("error: patch failed", code=1),
    )
    codex.item(type="custom_tool_call", call_id="f3", name="apply_patch", input=add)
    codex.event(
        type="patch_apply_end",
        call_id="f3",
        success=False,
        stdout="",
        stderr="Failed to apply patch",
        changes={},
    )
    codex.item(type="custom_tool_call", call_id="f4", name="apply_patch", input=add)
    codex.item(type="custom_tool_call_output", call_id="f4", output="patch rejected by user")
    codex.event(
        type="patch_apply_end",
        call_id="other",
        success=False,
        stdout="",
        stderr="",
        changes={f"{CWD}/b.txt": {"type": "add", "content": "b\n"}},
    )
    codex.item(type="custom_tool_call", call_id="f5", name="apply_patch", input=add)  # no end
    db = tmp_path / "runs.db"
    _import(db, write_lines(tmp_path / "rollout-2026-03-02T10-00-00-0199aaaa.jsonl", codex.lines))
    assert _changes(db) == {"codex": []}


# -- Gemini CLI -------------------------------------------------------------------


def _gemini_call(
    call_id: str, name: str, args: dict[str, Any], status: str, display: Any, response: Any
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": call_id,
        "name": name,
        "args": args,
        "result": [{"functionResponse": {"id": call_id, "name": name, "response": response}}],
        "status": status,
        "timestamp": "2026-03-02T10:00:30.000Z",
        "displayName": "Edit" if name == "replace" else "WriteFile",
        "description": "",
        "renderOutputAsMarkdown": True,
    }
    if display is not None:
        record["resultDisplay"] = display
    return record


def _file_diff(path: str, before: str | None, after: str) -> dict[str, Any]:
    name = path.rsplit("/", 1)[-1]
    return {
        "fileDiff": "".join(
            difflib.unified_diff(
                (before or "").splitlines(True), after.splitlines(True), name, name
            )
        ),
        "fileName": name,
        "filePath": path,
        "originalContent": before,
        "newContent": after,
        "diffStat": {
            "model_added_lines": 0,
            "model_removed_lines": 0,
            "model_added_chars": 0,
            "model_removed_chars": 0,
            "user_added_lines": 0,
            "user_removed_lines": 0,
            "user_added_chars": 0,
            "user_removed_chars": 0,
        },
        "isNewFile": before == "",
    }


def test_gemini_clis_replace_and_write_file_calls_are_its_changes(tmp_path: Path) -> None:
    calls = [
        _gemini_call(
            "replace-1",
            "replace",
            {
                "file_path": f"{CWD}/app/export.py",
                "old_string": "def export(rows):\n    return rows",
                "new_string": APP_AFTER.split("\n\n\n")[1].rstrip("\n"),
                "instruction": "Add a flag",
            },
            "success",
            _file_diff(f"{CWD}/app/export.py", APP_BEFORE, APP_AFTER),
            {"output": f"Successfully modified file: {CWD}/app/export.py (1 replacements)."},
        ),
        _gemini_call(
            "write_file-2",
            "write_file",
            {"file_path": f"{CWD}/app/cli.py", "content": CLI_TEXT},
            "success",
            _file_diff(f"{CWD}/app/cli.py", "", CLI_TEXT),
            {"output": f"Successfully created and wrote to new file: {CWD}/app/cli.py."},
        ),
        _gemini_call(
            "replace-3",
            "replace",
            {"file_path": f"{CWD}/app/cli.py", "old_string": "pass", "new_string": "return"},
            "cancelled",
            None,
            {"error": "[Operation Cancelled] Reason: User cancelled the operation."},
        ),
        _gemini_call(
            "replace-4",
            "replace",
            {"file_path": f"{CWD}/app/cli.py", "old_string": "nope", "new_string": "x"},
            "error",
            "Error: Failed to edit",
            {"error": "Failed to edit, 0 occurrences found for old_string in app/cli.py."},
        ),
    ]
    record = {
        "sessionId": "9f1c2d3e-0000-4000-8000-000000000001",
        "projectHash": "ab" * 32,
        "startTime": "2026-03-02T10:00:00.000Z",
        "lastUpdated": "2026-03-02T10:01:00.000Z",
        "directories": [CWD],
        "messages": [
            {
                "id": "m1",
                "timestamp": "2026-03-02T10:00:00.000Z",
                "type": "user",
                "content": [{"text": TASK}],
            },
            {
                "id": "m2",
                "timestamp": "2026-03-02T10:00:10.000Z",
                "type": "gemini",
                "content": "",
                "model": "gemini-2.5-pro",
                "toolCalls": calls,
            },
            {
                "id": "m3",
                "timestamp": "2026-03-02T10:00:40.000Z",
                "type": "gemini",
                "content": "Added --json.",
                "model": "gemini-2.5-pro",
            },
        ],
    }
    path = tmp_path / "chats" / "session-2026-03-02T10-00-9f1c2d3e.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record, indent=2), encoding="utf-8")
    db = tmp_path / "runs.db"
    _import(db, path)
    assert _changes(db) == {
        "gemini-cli": [
            ("app/export.py", *_counts(APP_BEFORE, APP_AFTER)),
            ("app/cli.py", 6, 0),
        ]
    }


def test_a_gemini_call_rewritten_as_it_finishes_counts_once_in_its_last_state(
    tmp_path: Path,
) -> None:
    args = {"file_path": "notes.md", "content": "a\nb\n"}
    running = _gemini_call("w1", "write_file", args, "executing", None, None)
    running.pop("result")
    done = _gemini_call(
        "w1",
        "write_file",
        args,
        "success",
        None,
        {"output": "Successfully created and wrote to new file: notes.md."},
    )
    header = {
        "sessionId": "9f1c2d3e-0000-4000-8000-000000000002",
        "projectHash": "cd" * 32,
        "startTime": "2026-03-02T10:00:00.000Z",
        "lastUpdated": "2026-03-02T10:00:00.000Z",
        "kind": "main",
    }
    user = {
        "id": "u1",
        "timestamp": "2026-03-02T10:00:00.000Z",
        "type": "user",
        "content": [{"text": TASK}],
    }

    def reply(call: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": "g1",
            "timestamp": "2026-03-02T10:00:05.000Z",
            "type": "gemini",
            "content": "",
            "model": "gemini-3-pro-preview",
            "toolCalls": [call],
        }

    lines: list[dict[str, Any]] = [
        header,
        user,
        reply(running),
        {"$set": {"lastUpdated": "2026-03-02T10:00:06Z"}},
        reply(done),
    ]
    db = tmp_path / "runs.db"
    _import(db, write_lines(tmp_path / "chats" / "session-1.jsonl", lines))
    assert _changes(db) == {"gemini-cli": [("notes.md", 2, 0)]}


def test_a_saved_gemini_history_pairs_each_call_with_its_response(tmp_path: Path) -> None:
    history = [
        {"role": "user", "parts": [{"text": TASK}]},
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {
                        "name": "write_file",
                        "args": {"file_path": "a.py", "content": "x = 1\n"},
                    }
                }
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "write_file",
                        "response": {"output": "Successfully created and wrote to new file: a.py."},
                    }
                }
            ],
        },
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {
                        "name": "replace",
                        "args": {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"},
                    }
                }
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "replace",
                        "response": {
                            "error": "Failed to edit, could not find the string to replace."
                        },
                    }
                }
            ],
        },
        {"role": "model", "parts": [{"text": "Created a.py."}]},
    ]
    path = tmp_path / "checkpoint-x.json"
    path.write_text(json.dumps(history), encoding="utf-8")
    db = tmp_path / "runs.db"
    _import(db, path)
    assert _changes(db) == {"gemini-cli": [("a.py", 1, 0)]}


# -- the store --------------------------------------------------------------------


def _session_with(edits: int, session: str = "c1") -> list[dict[str, Any]]:
    claude = ClaudeTranscript(session)
    claude.prompt(TASK)
    for number in range(edits):
        text = f"line {number}\n"
        tool_id = claude.call("Write", {"file_path": f"{CWD}/f{number}.txt", "content": text})
        claude.result(tool_id, "File created successfully", {"type": "create", "content": text})
    return claude.lines


def _stored(db: Path) -> list[tuple[str, int, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT a.name, e.position, e.path FROM agent_edits AS e"
            " JOIN agents AS a ON a.id = e.agent_id ORDER BY a.name, e.position"
        ).fetchall()


def test_a_grown_session_replaces_its_agents_edits_and_the_others_keep_theirs(
    tmp_path: Path,
) -> None:
    first = write_lines(tmp_path / "a" / "c1.jsonl", _session_with(2, "c1"))
    other = ClaudeTranscript("c2")
    other.prompt(TASK)
    tool_id = other.call("Write", {"file_path": f"{CWD}/other.txt", "content": "o\n"})
    other.result(tool_id, "File created successfully", {"type": "create", "content": "o\n"})
    second = write_lines(tmp_path / "b" / "c2.jsonl", other.lines)
    db = tmp_path / "runs.db"
    _import(db, first, second)
    assert len(_stored(db)) == 3
    write_lines(first, _session_with(3, "c1"))  # the session went on
    result = _import(db, first)
    assert "updated" in result.output
    by_agent: dict[str, list[str]] = {}
    for name, _, path in _stored(db):
        by_agent.setdefault(name, []).append(path)
    assert sorted(by_agent.values()) == [["f0.txt", "f1.txt", "f2.txt"], ["other.txt"]]


def test_an_agents_edits_go_with_its_run(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    _import(db, write_lines(tmp_path / "c1.jsonl", _session_with(2)))
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("DELETE FROM runs")
        assert conn.execute("SELECT count(*) FROM agent_edits").fetchone() == (0,)


def test_thousands_of_edits_list_their_files_from_the_index_alone(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    _import(db, write_lines(tmp_path / "c1.jsonl", _session_with(2000)))
    with sqlite3.connect(db) as conn:
        plan = " ".join(
            row[-1]
            for row in conn.execute(
                "EXPLAIN QUERY PLAN SELECT a.name, e.path, sum(e.added), sum(e.removed),"
                " count(*) FROM agents AS a JOIN agent_edits AS e ON e.agent_id = a.id"
                " WHERE a.run_id = 'x' GROUP BY a.id, e.path ORDER BY a.position, min(e.position)"
            )
        )
    assert "USING COVERING INDEX agent_edits_files" in plan
    files = _show(db)["agents"][0]["changes"]
    assert len(files) == 2000 and files[0] == {"path": "f0.txt", "added": 1, "removed": 0}


# -- the diff command -------------------------------------------------------------


def _one_edit_db(tmp_path: Path, path: str = f"{CWD}/app.py", text: str = "x = 1\n") -> Path:
    claude = ClaudeTranscript()
    claude.prompt(TASK)
    tool_id = claude.call("Write", {"file_path": path, "content": text})
    claude.result(tool_id, "File created successfully", {"type": "create", "content": text})
    db = tmp_path / "runs.db"
    _import(db, write_lines(tmp_path / "c1.jsonl", claude.lines))
    return db


def test_diff_colours_on_a_terminal_and_is_plain_in_a_pipe(tmp_path: Path) -> None:
    db = _one_edit_db(tmp_path, text="x = 1\n")
    plain = run_cli("diff", "session-", "--db", str(db)).output
    assert plain == ("# claude-code, turn 1\n--- a/app.py\n+++ b/app.py\n@@ -0,0 +1 @@\n+x = 1\n")
    coloured = CliRunner().invoke(cli, ["diff", "session-", "--db", str(db)], color=True).output
    assert "\x1b[32m+x = 1\x1b[0m" in coloured  # green
    assert "\x1b[36m@@ -0,0 +1 @@\x1b[0m" in coloured  # cyan


def test_diff_names_the_runs_agents_for_an_unknown_one(tmp_path: Path) -> None:
    db = _one_edit_db(tmp_path)
    result = run_cli("diff", "session-", "--db", str(db), "--agent", "codex")
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith("its agents: claude-code")
    assert run_cli("diff", "nope", "--db", str(db)).exit_code == 1


def test_diff_shows_hostile_text_inert(tmp_path: Path) -> None:
    evil = "\x1b]52;c;SGVsbG8=\x07[red]x[/red]\x1b[2J\u202e\x9b"
    db = _one_edit_db(tmp_path, path=f"{CWD}/{evil}.py", text=f"{evil}\n")
    for colour in (False, True):
        output = CliRunner().invoke(cli, ["diff", "session-", "--db", str(db)], color=colour)
        shown = output.output.replace("\x1b[32m", "").replace("\x1b[0m", "")
        shown = shown.replace("\x1b[1m", "").replace("\x1b[33m", "").replace("\x1b[36m", "")
        assert not UNSAFE.search(shown), repr(shown)
        assert "[red]x[/red]" in shown and "␛]52;c;SGVsbG8=␇" in shown
    text = run_cli("show", "session-", "--db", str(db)).output
    assert not UNSAFE.search(text) and "changes: 1 file, +1 -0" in text


@pytest.mark.parametrize("size", [900_000])
def test_a_huge_write_is_stored_cut_with_its_counts_whole(tmp_path: Path, size: int) -> None:
    text = "".join(f"{i:07d}\n" for i in range(size // 8))
    db = _one_edit_db(tmp_path, text=text)
    assert _changes(db) == {"claude-code": [("app.py", size // 8, 0)]}
    diff = run_cli("diff", "session-", "--db", str(db)).output
    assert len(diff) < 250_000
    assert "\\ diff cut here:" in diff and "(the counts are the whole edit's)" in diff


def test_the_demos_session_runs_show_their_changes(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    assert run_cli("demo", "--runs", "20", "--db", str(db)).exit_code == 0
    diff = run_cli("diff", "session-d5ea", "--db", str(db), "--agent", "codex").output
    assert diff.count("# codex, turn 1\n") == 3
    assert "--- a/app/main.py\n+++ b/app/main.py\n" in diff
    assert "+app.add_middleware(RateLimit)" in diff
    document = json.loads(run_cli("show", "session-3301", "--json", "--db", str(db)).output)
    assert {agent["name"]: agent["changes"] for agent in document["agents"]} == {
        "claude-code/claude-sonnet-4-5": [],
        "claude-code/claude-opus-4-5": [
            {"path": "storage/upload_test.go", "added": 1, "removed": 2}
        ],
    }


def test_the_edits_migration_is_idempotent_and_a_version_6_database_gains_it(
    tmp_path: Path,
) -> None:
    from ppp_tui.storage.schema import MIGRATIONS, SCHEMA_VERSION, _add_edits
    from ppp_tui.storage.store import Store

    assert MIGRATIONS.index(_add_edits) == 6 and SCHEMA_VERSION == 7
    path = tmp_path / "runs.db"
    _one_edit_db(tmp_path)  # a database with an edit, at version 7
    with sqlite3.connect(tmp_path / "runs.db") as conn:
        _add_edits(conn)  # again, on a database that has it all
        assert conn.execute("SELECT count(*) FROM agent_edits").fetchone() == (1,)
        conn.execute("DROP TABLE agent_edits")
        conn.execute("PRAGMA user_version = 6")
    with Store.open(path) as store:  # migrated forward again
        assert store.conn.execute("PRAGMA user_version").fetchone() == (7,)
        assert store.conn.execute("SELECT count(*) FROM agent_edits").fetchone() == (0,)
    assert "no changes" in run_cli("diff", "session-", "--db", str(path)).output


def test_a_write_of_more_text_than_a_session_keeps_counts_what_was_kept(tmp_path: Path) -> None:
    # A text past a megabyte is kept as its first and last half-megabyte (input-limits.md):
    # an edit of it counts the lines kept.
    text = "".join(f"{i:07d}\n" for i in range(3_000_000 // 8))
    db = _one_edit_db(tmp_path, text=text)
    ((path, added, removed),) = _changes(db)["claude-code"]
    assert (path, removed) == ("app.py", 0)
    assert (1 << 20) // 8 - 2 <= added <= (1 << 20) // 8 + 3
    diff = run_cli("diff", "session-", "--db", str(db)).output
    assert "\\ diff cut here:" in diff and len(diff) < 250_000
