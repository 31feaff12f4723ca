"""Where coding agents keep their sessions, and which agent wrote a file, by content.

Claude Code writes `~/.claude/projects/<project>/<session>.jsonl` (`$CLAUDE_CONFIG_DIR`
moves `~/.claude`), Codex CLI `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`
(`$CODEX_HOME` moves `~/.codex`), Gemini CLI `~/.gemini/tmp/<project>/chats/`. A file
is recognised by what it holds, never by its name; a folder stands for every session
under it.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ...core.sessions.model import Tool

# How much of a file is read to recognise it: 64 KB, then, while that holds fewer than
# _SNIFF_LINES lines (a long first line: a pasted log before a line's type), four times
# as much at a time, up to 4 MB.
_SNIFF_BYTES = 64 * 1024
_SNIFF_MAX = 4 << 20
_SNIFF_LINES = 40
_CLAUDE_TYPES = frozenset(
    {"user", "assistant", "summary", "system", "progress", "file-history-snapshot"}
    | {"queue-operation", "attachment", "custom-title", "ai-title", "last-prompt"}
)
_CODEX_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg"})
_CODEX_LEGACY_ITEMS = frozenset(
    {"message", "reasoning", "function_call", "function_call_output", "local_shell_call"}
)
_GEMINI_HEADER = frozenset({"sessionId", "projectHash"})
# What a folder walk looks at: transcripts are JSON Lines or JSON.
_SUFFIXES = (".jsonl", ".json")


def _lines(head: bytes) -> list[Any]:
    """The JSON lines at the start of `head`; of a last line cut short (longer than what
    was read: a long pasted prompt) the members before the cut."""
    values = []
    lines = head.split(b"\n")
    for number, line in enumerate(lines[:_SNIFF_LINES]):
        line = line.strip()
        if not line:
            continue
        try:
            values.append(json.loads(line))
        except (ValueError, RecursionError):
            if number == len(lines) - 1:
                cut = _cut_object(line)
                if cut:
                    values.append(cut)
    return values


_EMPTY: dict[str, type[Any]] = {"{": dict, "[": list, '"': str}


def _cut_object(line: bytes) -> dict[str, Any]:
    """The members of a JSON object cut short, up to the cut; the member the cut falls in
    has an empty value of its kind (`{}` for an object), so that its shape still shows."""
    text = line.decode("utf-8", errors="replace")
    decoder = json.JSONDecoder()
    found: dict[str, Any] = {}
    at = _space(text, 1) if text.startswith("{") else len(text)
    while text.startswith('"', at):
        try:
            key, at = decoder.raw_decode(text, at)
        except ValueError:
            break
        at = _space(text, at)
        if not text.startswith(":", at):
            break
        at = _space(text, at + 1)
        try:
            found[key], at = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            if at < len(text) and text[at] in _EMPTY:
                found[key] = _EMPTY[text[at]]()
            break
        at = _space(text, at)
        if not text.startswith(",", at):
            break
        at = _space(text, at + 1)
    return found


def _space(text: str, at: int) -> int:
    """Where the JSON white space from `at` on ends."""
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _pretty_object(head: bytes) -> bool:
    """A pretty-printed Gemini conversation record (its id at the top, its messages or
    project after it, perhaps past a long summary)."""
    top = head[:4096].decode("utf-8", errors="replace")
    return '"sessionId"' in top and (b'"messages"' in head or b'"projectHash"' in head)


def _chat_history(head: bytes) -> bool:
    """A saved Gemini chat: a JSON list of {role, parts} entries."""
    text = head[:4096].decode("utf-8", errors="replace")
    return '"role"' in text and '"parts"' in text


def recognise(head: bytes) -> Tool | None:
    """The agent whose transcript starts with `head`, or None."""
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped.startswith(b"["):
        return Tool.GEMINI_CLI if _chat_history(stripped) else None
    if not stripped.startswith(b"{"):
        return None
    lines = [value for value in _lines(stripped) if isinstance(value, dict)]
    if not lines:
        return Tool.GEMINI_CLI if _pretty_object(stripped) else None
    first = lines[0]
    if first.keys() >= _GEMINI_HEADER or ("messages" in first and "sessionId" in first):
        return Tool.GEMINI_CLI
    for line in lines:
        if _type(line) in _CODEX_TYPES and "payload" in line:
            return Tool.CODEX
        if "record_type" in line:
            return Tool.CODEX
    if (
        "id" in first
        and "timestamp" in first
        and "type" not in first
        and any(_type(line) in _CODEX_LEGACY_ITEMS for line in lines[1:])
    ):
        return Tool.CODEX  # the legacy flat rollout: a bare header, then bare items
    for line in lines:
        if _type(line) in _CLAUDE_TYPES and (
            isinstance(line.get("message"), dict)
            or "sessionId" in line
            or "leafUuid" in line
            or "uuid" in line
        ):
            return Tool.CLAUDE_CODE
        if "sessionId" in line and isinstance(line.get("message"), dict):
            return Tool.CLAUDE_CODE  # usage lines with no type (they hold no conversation)
    return None


def _type(line: dict[str, Any]) -> str | None:
    """A line's type, when it is a string (a list or an object is no type, and cannot be
    looked up in a set)."""
    kind = line.get("type")
    return kind if isinstance(kind, str) else None


def recognise_file(path: str) -> Tool | None:
    """The agent whose transcript `path` is, or None (also when it cannot be read)."""
    try:
        return sniff(path)
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return None


def sniff(path: str) -> Tool | None:
    """The agent whose transcript `path` is, or None; OSError when it cannot be read.
    Only a regular file is read: what is read of a pipe (`<(cat runs.jsonl)`) would be
    lost to the import that follows, and a FIFO with no writer would wait forever."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with open(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        head = handle.read(_SNIFF_BYTES)
        while (
            (tool := recognise(head)) is None
            and len(head) < _SNIFF_MAX
            and head.count(b"\n") < _SNIFF_LINES  # more would hold no line more looked at
        ):
            more = handle.read(len(head) * 3)
            if not more:
                break
            head += more
        return tool


def named_pipe(name: str) -> bool:
    """Whether `name` is a FIFO made with mkfifo: reading it waits for a writer that may
    never come. A pipe the shell hands over (`<(some command)`, /dev/fd/N) is none."""
    try:
        real = os.path.realpath(name)
        return not real.startswith(("/dev/fd/", "/proc/")) and stat.S_ISFIFO(os.lstat(real).st_mode)
    except (OSError, ValueError):
        return False


def is_sidecar(path: str) -> bool:
    """A sub-agent's metadata file beside its transcript (`agent-<id>.meta.json`)."""
    return path.endswith(".meta.json")


def walk(folder: Path, failed: Callable[[OSError], None] | None = None) -> Iterator[Path]:
    """Every JSON or JSON Lines file under `folder`, recursively, in name order; links to
    folders are not followed, and FIFOs, sockets and devices are no transcripts. A
    folder that cannot be listed is passed over, and told to `failed`."""
    for root, dirs, files in os.walk(folder, onerror=failed):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(_SUFFIXES) and not is_sidecar(name):
                path = Path(root) / name
                if not _special(path):
                    yield path


def _special(path: Path) -> bool:
    """Whether `path` is there but no regular file (one that cannot be read stays, for
    its reader to say why)."""
    try:
        return not stat.S_ISREG(path.stat().st_mode)
    except (OSError, ValueError):
        return False


def default_places(environ: dict[str, str] | None = None) -> dict[Tool, Path]:
    """Where each agent keeps its sessions on this machine (whether or not it exists)."""
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or Path.home())
    claude = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    codex = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
    gemini = Path(env["GEMINI_CLI_HOME"]) if env.get("GEMINI_CLI_HOME") else home
    return {
        Tool.CLAUDE_CODE: claude / "projects",
        Tool.CODEX: codex / "sessions",
        Tool.GEMINI_CLI: gemini / ".gemini" / "tmp",
    }


def repository_of(cwd: str | None) -> str | None:
    """The repository a folder is in: its git remote (origin, else the first), else the
    name of its root folder, the main checkout's for a worktree (so that worktrees of one
    repository match); read from the .git files, without running git. None if the
    folder is gone or not in a repository; then the folder's own name stands for it."""
    if not cwd:
        return None
    path = Path(cwd)
    try:
        for folder in (path, *path.parents):
            marker = folder / ".git"
            if marker.is_dir():
                return _remote(marker) or folder.name
            if marker.is_file():
                common = _common_dir(marker)
                if common is None:
                    return folder.name
                return _remote(common) or common.parent.name
    except OSError:
        pass
    return path.name or None


def _common_dir(marker: Path) -> Path | None:
    """The main repository's .git folder, from a worktree's `.git` file."""
    text = marker.read_text(encoding="utf-8", errors="replace").strip()
    if not text.startswith("gitdir:"):
        return None
    gitdir = Path(text.removeprefix("gitdir:").strip())
    if not gitdir.is_absolute():
        gitdir = (marker.parent / gitdir).resolve()
    common_file = gitdir / "commondir"
    if common_file.is_file():
        common = Path(common_file.read_text(encoding="utf-8", errors="replace").strip())
        return common if common.is_absolute() else (gitdir / common).resolve()
    return gitdir


def _remote(git_dir: Path) -> str | None:
    config = git_dir / "config"
    if not config.is_file():
        return None
    section = None
    remotes: dict[str, str] = {}
    for raw in config.read_text(encoding="utf-8", errors="replace").splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line.strip("[]").strip()
        elif section and section.startswith("remote ") and line.startswith("url"):
            name = section.removeprefix("remote ").strip().strip('"')
            remotes.setdefault(name, line.partition("=")[2].strip())
    url = remotes.get("origin") or next(iter(remotes.values()), None)
    return normalise_remote(url) if url else None


def normalise_remote(url: str) -> str:
    """A remote's URL as `host/owner/name`, whatever its protocol, user or `.git`."""
    text = url.strip().removesuffix("/").removesuffix(".git")
    if "://" in text:
        text = text.split("://", 1)[1]
    elif ":" in text and "@" in text.split(":", 1)[0]:
        text = text.replace(":", "/", 1)  # git@host:owner/name
    if "@" in text.split("/", 1)[0]:
        text = text.split("@", 1)[1]
    return text.lower()
