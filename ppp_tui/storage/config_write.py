"""Writing config.toml: tuned weights saved into it (SPEC 7), the example file, and the
effective configuration as TOML.

Saving edits the user's own text with tomlkit, so comments, key order, other tables and
unknown keys survive, and replaces the file atomically, never overwriting a file that does
not validate.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions
from tomlkit.container import Container
from tomlkit.items import Comment, InlineTable, Item, Key, Table

from ..core.errors import ConfigError
from ..core.preferences import CATALOGUE
from ..core.scoring import penalty_for
from ..core.settings import (
    STAGE_TUNED,
    PersonalizationSettings,
    ProactivitySettings,
    Settings,
    Weights,
)
from .config import OLDER_PAIR_KEYS, PAIR_KEYS, parse_settings, read_text

# Marks the provenance comments ppp-tui writes, so a later save replaces them.
NOTE_MARK = "# ppp-tui:"


# --- Saving tuned weights --------------------------------------------------------------------


def save_weights(
    path: Path,
    weights: Weights | None = None,
    stages: Mapping[str, Weights] | None = None,
    note: str | None = None,
    notes: Mapping[str | None, str] | None = None,
) -> None:
    """Write the global pair and/or stage pairs into `path`, changing nothing else.

    `note` (provenance, one line) goes beside each pair written, marked with NOTE_MARK;
    `notes` gives a pair its own (by stage, None for the global pair) instead. An earlier
    note of ours beside a pair written is replaced, or removed when it gets none, since it
    would describe weights that are no longer there. Raises ConfigError, leaving the file as it
    was, if the file is invalid now or the result would not read back as written.
    """
    stages = dict(stages or {})
    if weights is None and not stages:
        return
    for stage in stages:
        if not stage or stage in PAIR_KEYS:
            raise ConfigError(f"{path}: {stage!r} cannot name a stage table")
    text = read_text(path)
    if text is not None:
        try:
            parse_settings(text, path)
        except ConfigError as error:
            raise ConfigError(f"{error} (weights not saved; fix the file first)") from None
    try:
        new_text = _edit(text, weights, stages, note, notes or {})
    except (tomlkit.exceptions.TOMLKitError, ValueError) as error:
        # A layout tomlkit cannot edit in place, such as a stage table inside an inline table.
        raise ConfigError(f"{path}: cannot update this file ({error}); weights not saved") from None
    _check_written(new_text, path, weights, stages)
    _write_atomic(path, new_text)


def _edit(
    text: str | None,
    weights: Weights | None,
    stages: Mapping[str, Weights],
    note: str | None,
    notes: Mapping[str | None, str],
) -> str:
    """`text` (None: no file yet) with the pairs written into it and nothing else changed."""
    document = tomlkit.parse(text) if text is not None else tomlkit.document()

    def one_line(scope: str | None) -> str | None:
        given = notes.get(scope, note)
        return " ".join(given.split()) if given is not None else None

    ppp = _sub_table(document, "ppp")
    if weights is not None:
        if any(key in ppp for key in OLDER_PAIR_KEYS):
            # Seed 000's form stays in that form.
            _write_pair(ppp, weights, OLDER_PAIR_KEYS, one_line(None))
        else:
            _write_pair_table(ppp, "weights", weights, one_line(None))
    for stage, pair in stages.items():
        _write_pair_table(_sub_table(ppp, "weights"), stage, pair, one_line(stage))

    new_text = document.as_string()
    if new_text.endswith("\n\n") and not (text or "").endswith("\n\n"):
        # A table appended at the end brought a blank separator line with it.
        new_text = new_text.rstrip("\n") + "\n"
    if text and text.count("\n") == text.count("\r\n") > 0:
        # tomlkit writes new lines with "\n"; a Windows file keeps one kind of line ending.
        new_text = re.sub(r"(?<!\r)\n", "\r\n", new_text)
    return new_text


def _sub_table(parent: Any, key: str) -> Any:
    """`parent[key]`, created as a table if absent (one holding only tables has no header)."""
    if key not in parent:
        parent[key] = tomlkit.table()
    return parent[key]


def _write_pair_table(parent: Any, key: str, weights: Weights, note: str | None) -> None:
    """The pair into the table `parent[key]`; a new table ends with a blank line."""
    if key in parent:
        _write_pair(parent[key], weights, PAIR_KEYS, note)
        return
    table = tomlkit.table()
    _write_pair(table, weights, PAIR_KEYS, note)
    table.add(tomlkit.nl())
    # tomlkit appends the table after the comment lines sitting right above the next table
    # header; they move below the new table so they stay with the header they describe.
    for comment in _take_header_comments(parent):
        table.add(comment)
    parent[key] = table


def _take_header_comments(parent: Any) -> list[Comment]:
    """Remove and return the comment lines that end `parent`'s text with no blank line."""
    body = _body(parent)
    if body is None:
        return []
    if body and body[-1][0] is not None and isinstance(body[-1][1], Table):
        return _take_header_comments(body[-1][1])
    start = len(body)
    while start and body[start - 1][0] is None and isinstance(body[start - 1][1], Comment):
        start -= 1
    # Only keyless items at the very end go, so the container's key index stays valid.
    taken = [item for _, item in body[start:] if isinstance(item, Comment)]
    del body[start:]
    return taken


def _body(container: Any) -> list[tuple[Key | None, Item]] | None:
    if isinstance(container, Table):
        container = container.value
    return container.body if isinstance(container, Container) else None


def _write_pair(table: Any, weights: Weights, keys: tuple[str, str], note: str | None) -> None:
    # The float as given: its repr is the shortest text that reads back to the same number,
    # so 0.7 stays 0.7 and a tuned 0.6431234567891234 keeps every digit.
    table[keys[0]] = float(weights.technical)
    table[keys[1]] = float(weights.interaction)
    if isinstance(table, InlineTable):
        return  # an inline table has no room for a comment
    _set_note(table[keys[0]], note)
    _set_note(table[keys[1]], None)


def _set_note(item: Item, note: str | None) -> None:
    """Put our note beside `item`, after any comment of the user's own."""
    own = item.trivia.comment.split(NOTE_MARK, 1)[0].rstrip()
    comment = f"{own}  {NOTE_MARK} {note}".strip() if note is not None else own
    item.trivia.comment = comment
    if not comment:
        item.trivia.comment_ws = ""
    elif not item.trivia.comment_ws:
        item.trivia.comment_ws = "  "


def _check_written(
    text: str, path: Path, weights: Weights | None, stages: Mapping[str, Weights]
) -> None:
    """Refuse a result that does not validate or does not read back as the weights saved."""
    try:
        settings = parse_settings(text, path)
    except ConfigError as error:
        raise ConfigError(f"{error} (after the edit; weights not saved)") from None
    saved = {stage: settings.stage_weights.get(stage) for stage in stages}
    if saved != dict(stages) or weights not in (None, settings.weights):
        raise ConfigError(f"{path}: the edited file would not read back as saved; not saved")


def _write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text`: a crash leaves the old file or the new one, never half."""
    # Through a symlink to the real file, so the link survives the rename.
    target = Path(os.path.realpath(path))
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    temp = target.with_name(f".{target.name}.{os.urandom(6).hex()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # 0o666 lets the umask decide a new file's mode, as for any file the user creates.
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, target)
    except OSError as error:
        temp.unlink(missing_ok=True)
        raise ConfigError(f"{path}: cannot write ({error.strerror or error})") from None
    _sync_directory(target.parent)


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable, where the platform allows it."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass  # some file systems and Windows refuse fsync on a directory
    finally:
        os.close(descriptor)


# --- The example file and the effective configuration ----------------------------------------


def example_config() -> str:
    """SPEC 5's example, commented, with the seeds' stage recommendations."""
    defaults = Settings()
    stage_tables = "\n\n".join(
        f"[ppp.weights.{stage}]\n{_lines(_pair_document(weights))}"
        for stage, weights in STAGE_TUNED.items()
    )
    return f"""\
# ppp-tui configuration (SPEC 5). `ppp-tui config validate` checks this file and
# `ppp-tui config show` prints what is in effect. Delete a line to get its default.

[ppp]
# false ranks agents by technical score alone, as if PPP were off.
enabled = {_toml(defaults.enabled)}
# A run without a trajectory: "technical_only" scores final = technical;
# "neutral" scores final = technical weight * technical.
missing_trajectory = {_toml(defaults.missing_trajectory)}

# The global weights: final = technical * technical score + interaction * interaction
# score, where interaction score = R_Proact + R_Pers.
# Each pair is in [0, 1] and sums to 1.0. `ppp-tui tune --write` updates them.
[ppp.weights]
{_lines(_pair_document(defaults.weights))}

# One table per stage replaces the global pair for that stage's runs. These are the
# seeds' stage recommendations; delete a table to use the global pair for its stage.
{stage_tables}

# R_Proact: the bonus for asking no question (or only low-effort ones), and what each
# medium- and high-effort question costs.
[ppp.proactivity]
{_lines(_constants_document(defaults.proactivity))}

# R_Pers: the bonus for honouring the run's stated preferences, and what a violation
# costs by severity. An error costs its preference's penalty, from [ppp.penalties].
[ppp.personalization]
{_lines(_constants_document(defaults.personalization))}

# What one error-severity violation costs, per preference. Unlisted preferences cost
# the catalogue's default: 0.10 for language, 0.05 for all others.
[ppp.penalties]
lang_ita = {_toml(penalty_for("lang_ita", defaults))}
"""


def init_config(path: Path, force: bool = False) -> Path:
    """Write example_config() to `path`; an existing file only with `force`."""
    if path.exists() and not force:
        raise ConfigError(f"{path}: already exists; use --force to replace it")
    _write_atomic(path, example_config())
    return path


def settings_document(settings: Settings) -> dict[str, Any]:
    """The effective [ppp] table as plain data, in config.toml's shape (`config show --json`).

    `penalties` lists every catalogue preference's effective penalty, then any overrides
    for names outside the catalogue.
    """
    weights: dict[str, Any] = _pair_document(settings.weights)
    weights.update({stage: _pair_document(w) for stage, w in settings.stage_weights.items()})
    names = [*CATALOGUE, *(name for name in settings.penalties if name not in CATALOGUE)]
    return {
        "enabled": settings.enabled,
        "missing_trajectory": settings.missing_trajectory,
        "weights": weights,
        "proactivity": _constants_document(settings.proactivity),
        "personalization": _constants_document(settings.personalization),
        "penalties": {name: penalty_for(name, settings) for name in names},
    }


def render_settings(settings: Settings) -> str:
    """The effective configuration as config.toml text (`config show`)."""
    return tomlkit.dumps({"ppp": settings_document(settings)})


def _pair_document(weights: Weights) -> dict[str, Any]:
    return {"technical": float(weights.technical), "interaction": float(weights.interaction)}


def _constants_document(constants: ProactivitySettings | PersonalizationSettings) -> dict[str, Any]:
    return {f.name: float(getattr(constants, f.name)) for f in fields(constants)}


def _lines(document: Mapping[str, bool | float | str]) -> str:
    """A table's `key = value` lines."""
    return "\n".join(f"{key} = {_toml(value)}" for key, value in document.items())


def _toml(value: bool | float | str) -> str:
    return tomlkit.item(value).as_string()


# --- Saving penalties (the app's Paper preset) ------------------------------------------------


def save_penalties(path: Path, penalties: Mapping[str, float]) -> None:
    """Write these per-violation penalties into `[ppp.penalties]` of `path`, changing only
    the keys whose value differs; comments and everything else stay. Raises ConfigError,
    leaving the file as it was, if the file is invalid now or the result would not read
    back as written."""
    text = read_text(path)
    if text is not None:
        try:
            before = parse_settings(text, path)
        except ConfigError as error:
            raise ConfigError(f"{error} (penalties not saved; fix the file first)") from None
        if dict(before.penalties) == dict(penalties):
            return
    document = tomlkit.parse(text) if text is not None else tomlkit.document()
    try:
        table = _sub_table(_sub_table(document, "ppp"), "penalties")
        for name, value in penalties.items():
            if table.get(name) != value:
                table[name] = value
        new_text = tomlkit.dumps(document)
    except (tomlkit.exceptions.TOMLKitError, ValueError) as error:
        raise ConfigError(
            f"{path}: cannot update this file ({error}); penalties not saved"
        ) from None
    try:
        after = parse_settings(new_text, path)
    except ConfigError as error:
        raise ConfigError(f"{error} (after the edit; penalties not saved)") from None
    if any(after.penalties.get(name) != value for name, value in penalties.items()):
        raise ConfigError(f"{path}: the edited file would not read back as saved; not saved")
    _write_atomic(path, new_text)
