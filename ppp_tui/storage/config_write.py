"""Writing config.toml: tuned weights saved into it, the example file, and the
effective configuration as TOML.

Saving edits the user's own text with tomlkit, so comments, key order, other tables and
unknown keys survive, and replaces the file atomically, never overwriting a file that does
not validate. Writers take a lock file beside the config and read it again under the lock,
so two saves at once (the app and `tune --write`) never undo each other; the lock also
tells a killed save's temporary file (nobody holds the lock) from one being written. Only a
regular file, or a new file in an existing folder, is written: never a device, a pipe, a
dangling symbolic link or another program's TOML file.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions
from tomlkit.container import Container
from tomlkit.items import Comment, InlineTable, Item, Key, Null, Table

from ..core.errors import ConfigError
from ..core.masking import masked_url
from ..core.preferences import CATALOGUE
from ..core.scoring import penalty_for
from ..core.settings import (
    STAGE_TUNED,
    JudgeSettings,
    PersonalizationSettings,
    ProactivitySettings,
    Settings,
    Weights,
)
from .config import (
    BOM,
    OLDER_PAIR_KEYS,
    PAIR_KEYS,
    SPLIT_KEYS,
    WEIGHT_KEYS,
    file_kind,
    is_foreign,
    parse_settings,
    read_text,
    user_config_path,
)
from .config_leftovers import lock_now as _lock_now
from .config_leftovers import remove_stale_temporary_files as _remove_stale_temporary_files
from .durable import sync_directory
from .scratch import signals_end_as_exit

# Marks the provenance comments ppp-tui writes, so a later save replaces them.
NOTE_MARK = "# ppp-tui:"
# How long a save waits for another writer's lock before giving up.
LOCK_TIMEOUT_S = 10.0

# Saved weights have this many decimals; at this precision technical + interaction,
# each rounded, is exactly 1.0 as floats for every technical weight.
SAVED_DECIMALS = 6


def saved_pair(weights: Weights) -> Weights:
    """`weights` as saved. The pair form: technical to SAVED_DECIMALS, interaction its
    exact complement. Three weights: proactivity and personalization to SAVED_DECIMALS,
    technical 1 - their mean, to SAVED_DECIMALS too."""
    if not weights.is_pair:
        proactivity = round(float(weights.proactivity), SAVED_DECIMALS)
        personalization = round(float(weights.personalization), SAVED_DECIMALS)
        technical = round(1.0 - (proactivity + personalization) / 2, SAVED_DECIMALS)
        return Weights(max(technical, 0.0), proactivity, personalization)
    technical = round(float(weights.technical), SAVED_DECIMALS)
    return Weights.pair(technical, round(1.0 - technical, SAVED_DECIMALS))


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
        if not stage or stage in WEIGHT_KEYS:
            raise ConfigError(f"{path}: {stage!r} cannot name a stage table")
    with _locked(path) as target:
        # Read under the lock: another writer's save just before this one is kept.
        text = read_text(target)
        if text is not None:
            try:
                parse_settings(text, path)
            except ConfigError as error:
                raise ConfigError(f"{error} (weights not saved; fix the file first)") from None
            if is_foreign(text):
                raise ConfigError(
                    f"{path}: has no [ppp] table (another program's file?); weights not saved"
                )
        try:
            new_text = _edit(text, weights, stages, note, notes or {})
        except (tomlkit.exceptions.TOMLKitError, ValueError) as error:
            # A layout tomlkit cannot edit in place, such as a stage table inside an inline
            # table.
            raise ConfigError(
                f"{path}: cannot update this file ({error}); weights not saved"
            ) from None
        _check_written(new_text, path, weights, stages)
        _write_atomic(target, new_text)


def _edit(
    text: str | None,
    weights: Weights | None,
    stages: Mapping[str, Weights],
    note: str | None,
    notes: Mapping[str | None, str],
) -> str:
    """`text` (None: no file yet) with the pairs written into it and nothing else changed."""
    bom = BOM if text is not None and text.startswith(BOM) else ""
    document = tomlkit.parse(text.removeprefix(BOM)) if text is not None else tomlkit.document()
    if dotted := _dotted_ppp_key(document):
        raise ValueError(
            f"{dotted} is set with a dotted key, which cannot be edited in place;"
            " write it under a table header such as [ppp.weights]"
        )

    def one_line(scope: str | None) -> str | None:
        given = notes.get(scope, note)
        return " ".join(given.split()) if given is not None else None

    ppp = _sub_table(document, "ppp")
    if weights is not None:
        if any(key in ppp for key in OLDER_PAIR_KEYS) and weights.is_pair:
            # The older [ppp] form stays in that form while it can say the weights.
            _write_pair(ppp, weights, OLDER_PAIR_KEYS, one_line(None))
        else:
            for key in OLDER_PAIR_KEYS:  # three weights: [ppp.weights] replaces them
                if key in ppp:
                    del ppp[key]
            _write_pair_table(ppp, "weights", weights, one_line(None))
    for stage, pair in stages.items():
        _write_pair_table(_sub_table(ppp, "weights"), stage, pair, one_line(stage))

    new_text = bom + document.as_string()
    if new_text.endswith("\n\n") and not (text or "").endswith("\n\n"):
        # A table appended at the end brought a blank separator line with it.
        new_text = new_text.rstrip("\n") + "\n"
    if text and text.count("\n") == text.count("\r\n") > 0:
        # tomlkit writes new lines with "\n"; a Windows file keeps one kind of line ending.
        new_text = re.sub(r"(?<!\r)\n", "\r\n", new_text)
    return new_text


def _dotted_ppp_key(document: Any) -> str | None:
    """The first key under `ppp` written with dots (`ppp.weights.technical = 0.7`, or
    `weights.technical` inside [ppp]), whose tables tomlkit cannot edit reliably."""

    def walk(container: Any, prefix: str, dotted: bool) -> str | None:
        for key, item in _body(container) or []:
            if key is None or (not prefix and key.key != "ppp"):
                continue
            name = f"{prefix}{key.key}"
            if isinstance(item, Table):
                if found := walk(item, f"{name}.", dotted or key.is_dotted()):
                    return found
            elif dotted or key.is_dotted():
                return name
        return None

    return walk(document, "", False)


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
    """The weights into `table`: technical and interaction while proactivity and
    personalization weigh the same, else technical, proactivity and personalization
    (the keys of the other form are removed)."""
    # All to the same fixed precision (0.707851 and 0.292149), summing to exactly 1.0.
    pair = saved_pair(weights)
    written: tuple[str, ...]
    values: tuple[float, ...]
    if pair.is_pair:
        written = (keys[0], keys[1])
        values = (pair.technical, pair.interaction)
        stale: tuple[str, ...] = SPLIT_KEYS
    else:
        written = (keys[0], *SPLIT_KEYS)
        values = (pair.technical, pair.proactivity, pair.personalization)
        stale = (keys[1],)
    for key in stale:
        if key in table:
            del table[key]
    for key, value in zip(written, values, strict=True):
        table[key] = value
    if isinstance(table, InlineTable):
        return  # an inline table has no room for a comment
    _set_note(table, written[0], note)
    for key in written[1:]:
        _set_note(table, key, None)


def _set_note(table: Any, key: str, note: str | None) -> None:
    """Put our note beside `table[key]`, or on its own line just above it when the user
    has a comment of their own there; an earlier note of ours is replaced or removed."""
    item: Item = table[key]
    own = item.trivia.comment.split(NOTE_MARK, 1)[0].rstrip()
    above = _note_above(table, key)
    if above is not None:  # our note of an earlier save, on its own line
        body, index = above
        body[index] = (None, Null())
    beside = note is not None and not own
    comment = f"{NOTE_MARK} {note}" if beside else own
    item.trivia.comment = comment
    if not comment:
        item.trivia.comment_ws = ""
    elif not item.trivia.comment_ws:
        item.trivia.comment_ws = "  "
    if note is not None and not beside:
        indent = item.trivia.indent.rsplit("\n", 1)[-1]
        item.trivia.indent += f"{NOTE_MARK} {note}\n{indent}"


def _note_above(table: Any, key: str) -> tuple[list[tuple[Key | None, Item]], int] | None:
    """(body, index) of our note on the line right above `key` in `table`, if there is one."""
    body = _body(table)
    if body is None:
        return None
    for index, (name, _) in enumerate(body):
        if name is not None and name.key == key:
            if index and body[index - 1][0] is None:
                previous = body[index - 1][1]
                if isinstance(previous, Comment) and previous.trivia.comment.startswith(NOTE_MARK):
                    return body, index - 1
            return None
    return None


def _check_written(
    text: str, path: Path, weights: Weights | None, stages: Mapping[str, Weights]
) -> None:
    """Refuse a result that does not validate or does not read back as the weights saved."""
    try:
        settings = parse_settings(text, path)
    except ConfigError as error:
        raise ConfigError(f"{error} (after the edit; weights not saved)") from None
    saved = {stage: settings.stage_weights.get(stage) for stage in stages}
    wanted = {stage: saved_pair(pair) for stage, pair in stages.items()}
    if saved != wanted or (weights is not None and saved_pair(weights) != settings.weights):
        raise ConfigError(f"{path}: the edited file would not read back as saved; not saved")


def _writable_target(path: Path) -> Path:
    """The file a save replaces: `path`, or the regular file its symbolic link points to.

    Refuses anything else (a device, a named pipe, a directory, a link to nothing, a missing
    folder): renaming over it would replace it with a regular file, or create a file where
    the user never asked for one. Only the user config folder is created if missing.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if not path.parent.is_dir():
            if path != user_config_path():
                raise ConfigError(f"{path}: no such folder {path.parent}; not written") from None
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise ConfigError(f"{path}: cannot write ({error.strerror or error})") from None
        return path
    except OSError as error:
        raise ConfigError(f"{path}: cannot write ({error.strerror or error})") from None
    if stat.S_ISLNK(info.st_mode):
        target = Path(os.path.realpath(path))
        try:
            info = os.stat(target)
        except OSError:
            raise ConfigError(
                f"{path}: is a symbolic link to {target}, which does not exist; not written"
            ) from None
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(
                f"{path}: links to {file_kind(info.st_mode)}, not a regular file; not written"
            )
        return target
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path}: is {file_kind(info.st_mode)}, not a regular file; not written")
    return path


@contextmanager
def _locked(path: Path) -> Iterator[Path]:
    """Hold the config's writer lock; yields the file to replace (see `_writable_target`).

    The lock is a file beside the real config, `.config.toml.lock`, locked with flock (a
    lock the system drops when its holder dies, so a killed writer never blocks the next).
    It is never deleted: a writer could be waiting on the one being removed. Temporary files
    left by a writer killed mid-save are removed here: every save writes its temporary file
    under this lock, so none is being written now.
    """
    target = _writable_target(path)
    lock = target.with_name(f".{target.name}.lock")
    try:
        descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as error:
        raise ConfigError(f"{path}: cannot write ({error.strerror or error})") from None
    try:
        _acquire(descriptor, path)
        target = _writable_target(path)  # again: it may have changed while waiting
        _remove_stale_temporary_files(target)
        yield target
    finally:
        os.close(descriptor)  # releases the lock


def _acquire(descriptor: int, path: Path) -> None:
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    while True:
        try:
            _lock_now(descriptor)
            return
        except OSError as error:
            if time.monotonic() > deadline:
                raise ConfigError(
                    f"{path}: another ppp-tui is saving it ({error.strerror or error}); try again"
                ) from None
            time.sleep(0.005)


def _write_atomic(path: Path, text: str) -> None:
    """Replace `path` (a file `_writable_target` approved) with `text`: a crash leaves the
    old file or the new one, never half."""
    target = path
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None
    temp = target.with_name(f".{target.name}.{os.urandom(6).hex()}.tmp")
    try:
        # SIGTERM and SIGHUP, like ctrl+c, end the save by an exception: the temporary
        # file is removed on the way out.
        with signals_end_as_exit():
            try:
                # 0o666 lets the umask decide a new file's mode, as for any file the user
                # creates.
                descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
                    handle.write(text)
                    handle.flush()
                    os.fsync(handle.fileno())
                if mode is not None:
                    os.chmod(temp, mode)
                os.replace(temp, target)
            except BaseException:
                temp.unlink(missing_ok=True)
                raise
    except OSError as error:
        raise ConfigError(f"{path}: cannot write ({error.strerror or error})") from None
    sync_directory(target.parent)


# --- The example file and the effective configuration ----------------------------------------


def example_config() -> str:
    """The example config.toml, commented, with the recommended stage tables."""
    defaults = Settings()
    stage_tables = "\n\n".join(
        f"[ppp.weights.{stage}]\n{_lines(_pair_document(weights))}"
        for stage, weights in STAGE_TUNED.items()
    )
    return f"""\
# ppp-tui configuration. `ppp-tui config validate` checks this file and
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
# To weigh R_Proact and R_Pers apart, give `proactivity` and `personalization` instead
# of `interaction`: final = technical * technical score + proactivity * R_Proact +
# personalization * R_Pers, all >= 0, with technical + (proactivity + personalization)
# / 2 = 1.0. Any table below may do the same.
[ppp.weights]
{_lines(_pair_document(defaults.weights))}

# One table per stage replaces the global pair for that stage's runs. These are the
# recommended stage weights; delete a table to use the global pair for its stage.
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
    with _locked(path) as target:
        if os.path.lexists(path) and not force:
            raise ConfigError(f"{path}: already exists; use --force to replace it")
        _write_atomic(target, example_config())
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
        **({"judge": judge_document(settings.judge)} if settings.judge else {}),
    }


def judge_document(judge: JudgeSettings) -> dict[str, Any]:
    """[ppp.judge] as config.toml spells it: the key's variable name, never the key, and
    the URL with any password in it hidden."""
    return {
        "base_url": masked_url(judge.base_url),
        "model": judge.model,
        "api_key_env": judge.api_key_env or "",
        "concurrency": judge.concurrency,
        "timeout_s": float(judge.timeout_s),
        "max_tokens": judge.max_tokens,
    }


def render_settings(settings: Settings) -> str:
    """The effective configuration as config.toml text (`config show`)."""
    return tomlkit.dumps({"ppp": settings_document(settings)})


def _pair_document(weights: Weights) -> dict[str, Any]:
    if not weights.is_pair:
        return {
            "technical": float(weights.technical),
            "proactivity": float(weights.proactivity),
            "personalization": float(weights.personalization),
        }
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
    back as written. Saved under the writer lock, as weights are (`_locked`)."""
    with _locked(path) as target:
        _save_penalties(path, target, penalties)


def _save_penalties(path: Path, target: Path, penalties: Mapping[str, float]) -> None:
    text = read_text(target)
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
    _write_atomic(target, new_text)
