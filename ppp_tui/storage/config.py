"""config.toml: where it lives and what it says.

Reading uses tomllib and turns the file into a core `Settings`; every problem becomes one
`ConfigError` line naming the file, the key and the value. Writing the file (saving tuned
weights, `config init`, `config show`) is in `config_write`, which needs tomlkit: reading
does not, so the app's first screen does not load it.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import fields, replace
from datetime import date, time
from pathlib import Path
from typing import Any, TypeVar

import platformdirs

from ..core.errors import ConfigError, PPPError, too_many_digits
from ..core.masking import masked_url
from ..core.model import MAX_PENALTY
from ..core.settings import (
    MISSING_TRAJECTORY_MODES,
    STAGES,
    WEIGHT_SUM_TOLERANCE,
    JudgeSettings,
    PersonalizationSettings,
    ProactivitySettings,
    Settings,
    Weights,
    validate_three,
    validate_weights,
)

APP_NAME = "ppp-tui"
CONFIG_ENV = "PPP_TUI_CONFIG"
DB_ENV = "PPP_TUI_DB"
CONFIG_NAME = "config.toml"

# A UTF-8 byte order mark some editors put first: read past it, and kept on a save.
BOM = "\ufeff"

# The pair's key names in the current form and in the older `[ppp]` form.
PAIR_KEYS = ("technical", "interaction")
OLDER_PAIR_KEYS = ("technical_weight", "interaction_weight")
# The two weights that split interaction, given instead of (or with) `interaction`.
SPLIT_KEYS = ("proactivity", "personalization")
# The keys of a weights table that are not stages (the three-weight form's too).
WEIGHT_KEYS = (*PAIR_KEYS, *SPLIT_KEYS)

_Constants = TypeVar("_Constants", ProactivitySettings, PersonalizationSettings)


# --- Where the files are ---------------------------------------------------------------------


def config_path(explicit: str | Path | None = None) -> Path:
    """--config PATH, else $PPP_TUI_CONFIG, else ./config.toml if it is ppp-tui's (it has a
    [ppp] table), else the user's."""
    if explicit:
        return Path(explicit).expanduser()
    if env := os.environ.get(CONFIG_ENV):
        return Path(env).expanduser()
    local = Path(CONFIG_NAME)
    if local.is_file() and ignored_local_config() is None:
        return local
    return user_config_path()


def user_config_path() -> Path:
    return platformdirs.user_config_path(APP_NAME) / CONFIG_NAME


def ignored_local_config(explicit: str | Path | None = None) -> str | None:
    """Why ./config.toml is passed over in the lookup, or None if it is not.

    A config.toml in the working folder is often another program's (a static site's, a
    build tool's): it is adopted only if it has a [ppp] table, so ppp-tui never reads
    another tool's settings as its own, nor writes its tables into that file.
    """
    if explicit or os.environ.get(CONFIG_ENV):
        return None
    local = Path(CONFIG_NAME)
    try:
        info = os.stat(local)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return f"./{CONFIG_NAME} ignored: it is {file_kind(info.st_mode)}, not a regular file"
    try:
        text = read_text(local)
    except ConfigError:
        return None  # adopted, so the reason it cannot be read is reported
    if text is None or not is_foreign(text):
        return None
    return f"./{CONFIG_NAME} ignored: it has no [ppp] table (another program's file?)"


# `[ppp]`, `[ppp.weights]`, `ppp.weights.technical = ...` at the start of a line: what an
# unparsable file is judged by.
_PPP_LINE = re.compile(r"""^[ \t]*(\[[ \t]*)?["']?ppp["']?[ \t]*[.\]]""", re.MULTILINE)


def is_foreign(text: str) -> bool:
    """Whether config text is another program's: it sets something, but nothing under `ppp`.

    An empty file (or one of comments only) is not. A file that is not valid TOML is
    ppp-tui's if a line starts a `ppp` table or key, so a broken ppp-tui file is reported
    rather than passed over.
    """
    try:
        data = tomllib.loads(text.removeprefix(BOM))
    except tomllib.TOMLDecodeError:
        return _PPP_LINE.search(text) is None
    return bool(data) and "ppp" not in data


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    )
    return next((name for test, name in kinds if test(mode)), "a special file")


def db_path(explicit: str | Path | None = None) -> Path:
    """--db PATH, else $PPP_TUI_DB, else the user data folder's runs.db. A URL is never
    taken for a path: this version refuses a PostgreSQL server's (location.py)."""
    if explicit:
        return _file_path(str(explicit), "--db")
    if env := os.environ.get(DB_ENV):
        return _file_path(env, f"${DB_ENV}")
    return platformdirs.user_data_path(APP_NAME) / "runs.db"


def _file_path(value: str, given_by: str) -> Path:
    from .location import looks_like_url, refuse_server

    if looks_like_url(value):
        raise refuse_server(value, given_by)
    return Path(value).expanduser()


# --- Reading ---------------------------------------------------------------------------------


def load_settings(path: Path) -> Settings:
    """The settings `path` describes; a missing file means the defaults. A killed
    save's leftover temporary file beside it goes (config_leftovers.py)."""
    from .config_leftovers import remove_leftovers

    remove_leftovers(path)
    text = read_text(path)
    return Settings() if text is None else parse_settings(text, path)


def read_text(path: Path) -> str | None:
    """The file's text (a byte order mark included), None if there is no file.

    Only a regular file is read: a named pipe would block and a device never ends, so
    anything else is refused before it is opened, and opened without waiting in case it
    was swapped in between.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read ({error.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path}: is {file_kind(info.st_mode)}, not a config file")
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read ({error.strerror})") from None
    with os.fdopen(descriptor, "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise ConfigError(f"{path}: is {file_kind(mode)}, not a config file")
        try:
            data = handle.read()
        except OSError as error:
            raise ConfigError(f"{path}: cannot read ({error.strerror})") from None
    try:
        # Decoded by hand rather than read_text so Windows line endings survive a save.
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"{path}: not UTF-8 text ({error.reason} at byte {error.start})"
        ) from None


def parse_settings(text: str, source: Path) -> Settings:
    try:
        data = tomllib.loads(text.removeprefix(BOM))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: invalid TOML: {error}") from None
    except ValueError as error:
        if (digits := too_many_digits(error)) is None:
            raise
        raise ConfigError(f"{source}: invalid TOML: {digits}") from None
    except RecursionError:
        raise ConfigError(f"{source}: invalid TOML: nested too deeply") from None
    try:
        return _settings_from(data)
    except PPPError as error:
        raise ConfigError(f"{source}: {error}") from None


def _settings_from(data: Mapping[str, Any]) -> Settings:
    ppp = _table(data, "ppp", "ppp")
    enabled = ppp.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ConfigError(f"ppp.enabled: expected true or false, got {_show(enabled)}")
    mode = ppp.get("missing_trajectory", "technical_only")
    if mode not in MISSING_TRAJECTORY_MODES:
        choices = " or ".join(json.dumps(m) for m in MISSING_TRAJECTORY_MODES)
        raise ConfigError(f"ppp.missing_trajectory: expected {choices}, got {_show(mode)}")

    table = _table(ppp, "weights", "ppp.weights")
    current = _pair(table, "ppp.weights", PAIR_KEYS, SPLIT_KEYS)
    older = _pair(ppp, "ppp", OLDER_PAIR_KEYS)
    if current is not None and older is not None:
        raise ConfigError(
            "ppp: technical_weight/interaction_weight and [ppp.weights] both set the global"
            " weights; keep one"
        )
    stages: dict[str, Weights] = {}
    for stage, value in table.items():
        # Any sub-table of [ppp.weights] is a stage's pair; an empty one says nothing.
        if isinstance(value, dict):
            if pair := _pair(value, f"ppp.weights.{stage}", PAIR_KEYS, SPLIT_KEYS):
                stages[stage] = pair
        elif stage in STAGES:
            # A pipeline stage's weights are a table; a value here could not be saved over
            # either. Other unknown keys are kept (`config validate` warns about them).
            raise ConfigError(
                f"ppp.weights.{stage}: expected a table of the stage's weights"
                f" ([ppp.weights.{stage}] with technical and interaction), got {_show(value)}"
            )

    penalties = _table(ppp, "penalties", "ppp.penalties")
    unscored = ppp.get("unscored_technical", Settings().unscored_technical)
    if (
        isinstance(unscored, bool)
        or not isinstance(unscored, int | float)
        or not 0.0 <= unscored <= 1.0
    ):
        raise ConfigError(
            f"ppp.unscored_technical: expected a number in [0, 1], got {_show(unscored)}"
        )
    reviewer = ppp.get("reviewer")
    if reviewer is not None:
        from .reviewers import checked

        if not isinstance(reviewer, str):
            raise ConfigError(f"ppp.reviewer: expected a name, got {_show(reviewer)}")
        reviewer = checked(reviewer, "ppp.reviewer")
    return Settings(
        reviewer=reviewer,
        judge=_judge(ppp),
        unscored_technical=float(unscored),
        enabled=enabled,
        missing_trajectory=mode,
        weights=current or older or Settings().weights,
        stage_weights=stages,
        proactivity=_constants(ppp, "proactivity", ProactivitySettings()),
        personalization=_constants(ppp, "personalization", PersonalizationSettings()),
        penalties={
            name: _magnitude(penalties, name, f"ppp.penalties.{name}") for name in penalties
        },
    )


# [ppp.judge]'s keys; `concurrency` and `timeout_s` have bounds.
JUDGE_KEYS = ("base_url", "model", "api_key_env", "concurrency", "timeout_s", "max_tokens")
MAX_JUDGE_CONCURRENCY = 64
MAX_JUDGE_TOKENS = 100_000
MAX_JUDGE_TIMEOUT_S = 3600.0
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_URL = re.compile(r"https?://[^\s/?#]+(/[^\s?#]*)?", re.IGNORECASE)


def _judge(ppp: Mapping[str, Any]) -> JudgeSettings | None:
    """[ppp.judge], checked; None when there is no such table."""
    if "judge" not in ppp:
        return None
    table = _table(ppp, "judge", "ppp.judge")
    if "api_key" in table:
        # The value is never shown: it may be the key itself.
        raise ConfigError(
            "ppp.judge.api_key: the API key is never read from config.toml; put it in an"
            " environment variable and name that with api_key_env"
        )
    for key in ("base_url", "model"):
        if key not in table:
            raise ConfigError(f"ppp.judge: {key} is missing (base_url and model are required)")
    base_url = table["base_url"]
    if not isinstance(base_url, str) or not _URL.fullmatch(base_url.strip()) or not _host(base_url):
        shown = masked_url(base_url) if isinstance(base_url, str) else base_url
        raise ConfigError(
            "ppp.judge.base_url: expected an http:// or https:// URL such as"
            f' "http://localhost:11434/v1", got {_show(shown)}'
        )
    model = table["model"]
    if not isinstance(model, str) or not model.strip():
        raise ConfigError(f"ppp.judge.model: expected the model's name, got {_show(model)}")
    key_env = table.get("api_key_env", JudgeSettings.api_key_env)
    if not isinstance(key_env, str) or (key_env and not _ENV_NAME.fullmatch(key_env)):
        raise ConfigError(
            "ppp.judge.api_key_env: expected the name of an environment variable"
            f' (letters, digits, _) or "" for none, got {_show(key_env)}'
        )
    concurrency = table.get("concurrency", JudgeSettings.concurrency)
    if (
        isinstance(concurrency, bool)
        or not isinstance(concurrency, int)
        or not 1 <= concurrency <= MAX_JUDGE_CONCURRENCY
    ):
        raise ConfigError(
            f"ppp.judge.concurrency: expected a whole number from 1 to {MAX_JUDGE_CONCURRENCY},"
            f" got {_show(concurrency)}"
        )
    timeout = _number(table, "timeout_s", "ppp.judge.timeout_s")
    if timeout is not None and not 0 < timeout <= MAX_JUDGE_TIMEOUT_S:
        raise ConfigError(
            f"ppp.judge.timeout_s: expected seconds above 0 and at most {MAX_JUDGE_TIMEOUT_S:g},"
            f" got {_show(table['timeout_s'])}"
        )
    max_tokens = table.get("max_tokens", JudgeSettings.max_tokens)
    if (
        isinstance(max_tokens, bool)
        or not isinstance(max_tokens, int)
        or not 0 <= max_tokens <= MAX_JUDGE_TOKENS
    ):
        raise ConfigError(
            f"ppp.judge.max_tokens: expected a whole number from 0 (no cap) to"
            f" {MAX_JUDGE_TOKENS:,}, got {_show(max_tokens)}"
        )
    return JudgeSettings(
        base_url=base_url.strip().rstrip("/"),
        model=model.strip(),
        api_key_env=key_env or None,
        concurrency=concurrency,
        timeout_s=JudgeSettings.timeout_s if timeout is None else timeout,
        max_tokens=max_tokens,
    )


def _host(url: str) -> bool:
    """Whether a URL names a host (and a valid port, if any)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 (raises for a port that is not a number in range)
    except ValueError:
        return False
    return bool(parts.hostname)


_PPP_KEYS = frozenset(
    {"enabled", "missing_trajectory", "weights", "proactivity", "personalization", "penalties"}
    | {"unscored_technical", "reviewer", "judge"}
    | set(OLDER_PAIR_KEYS)
)


def config_warnings(text: str) -> list[str]:
    """One line per key ppp-tui does not read, and per [ppp.penalties] name that is not a
    catalogue preference, in a file that already parses (`config validate`)."""
    from ..core.preferences import is_known

    data = tomllib.loads(text)
    warnings = [f"unknown key {key!r} (not read by ppp-tui)" for key in data if key != "ppp"]
    ppp = data.get("ppp", {})
    for key, value in ppp.items():
        if key not in _PPP_KEYS:
            warnings.append(f"unknown key {_dotted('ppp', key)} (not read by ppp-tui)")
        elif key in ("proactivity", "personalization"):
            names = {
                f.name
                for f in fields(
                    ProactivitySettings if key == "proactivity" else PersonalizationSettings
                )
            }
            warnings += [
                f"unknown key {_dotted('ppp', key, name)} (not read by ppp-tui)"
                for name in value
                if name not in names
            ]
        elif key == "judge" and isinstance(value, dict):
            warnings += [
                f"unknown key {_dotted('ppp', key, name)} (not read by ppp-tui)"
                for name in value
                if name not in JUDGE_KEYS
            ]
        elif key == "penalties":
            warnings += [
                f"unknown preference {_dotted('ppp', 'penalties', name)}"
                " (not in the catalogue; kept)"
                for name in value
                if not is_known(name)
            ]
        elif key == "weights":
            for name, item in value.items():
                if isinstance(item, dict):
                    warnings += [
                        f"unknown key {_dotted('ppp', 'weights', name, inner)}"
                        " (not read by ppp-tui)"
                        for inner in item
                        if inner not in WEIGHT_KEYS
                    ]
                elif name not in WEIGHT_KEYS:
                    warnings.append(
                        f"unknown key {_dotted('ppp', 'weights', name)} (not read by ppp-tui)"
                    )
    return warnings


def _dotted(*parts: str) -> str:
    """A key's dotted name, quoted with any control character escaped."""
    return repr(".".join(parts))


def _table(parent: Mapping[str, Any], key: str, name: str) -> Mapping[str, Any]:
    value = parent.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{name}: expected a table, got {_show(value)}")
    return value


def _number(table: Mapping[str, Any], key: str, name: str) -> float | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{name}: expected a number, got {_show(value)}")
    if isinstance(value, int) and not -1e308 < value < 1e308:
        raise ConfigError(f"{name}: number out of range (an integer beyond ±1e308)")
    if not math.isfinite(value):
        raise ConfigError(f"{name}: expected a finite number, got {_show(value)}")
    return float(value)


def _magnitude(table: Mapping[str, Any], key: str, name: str) -> float:
    """A bonus or penalty: a number >= 0 (the formulas apply the sign)."""
    value = _number(table, key, name)
    assert value is not None  # only called for keys the table has
    if value < 0:
        raise ConfigError(f"{name}: must be >= 0, got {_show(value)}")
    if value > MAX_PENALTY:
        raise ConfigError(f"{name}: must be at most {MAX_PENALTY:g}, got {value:g}")
    return value


def _pair(
    table: Mapping[str, Any],
    name: str,
    keys: tuple[str, str],
    split_keys: tuple[str, str] | None = None,
) -> Weights | None:
    """The weights a table gives: technical and interaction (the pair form), or
    technical, proactivity and personalization, with interaction too if it is their mean."""
    technical = _number(table, keys[0], f"{name}.{keys[0]}")
    interaction = _number(table, keys[1], f"{name}.{keys[1]}")
    split = (
        (None, None)
        if split_keys is None
        else tuple(_number(table, key, f"{name}.{key}") for key in split_keys)
    )
    if split != (None, None):
        assert split_keys is not None
        return _three(name, technical, interaction, split, split_keys)
    if technical is None and interaction is None:
        return None
    if technical is None or interaction is None:
        missing = keys[0] if technical is None else keys[1]
        raise ConfigError(f"{name}: {missing} is missing ({keys[0]} and {keys[1]} go together)")
    validate_weights(technical, interaction, name)
    return Weights.pair(technical, interaction)


def _three(
    name: str,
    technical: float | None,
    interaction: float | None,
    split: tuple[float | None, ...],
    keys: tuple[str, str],
) -> Weights:
    proactivity, personalization = split
    if proactivity is None or personalization is None:
        missing = keys[0] if proactivity is None else keys[1]
        raise ConfigError(f"{name}: {missing} is missing ({keys[0]} and {keys[1]} go together)")
    if technical is None:
        raise ConfigError(f"{name}: technical is missing (it goes with {keys[0]} and {keys[1]})")
    validate_three(technical, proactivity, personalization, name)
    if interaction is not None:
        mean = (proactivity + personalization) / 2
        if abs(interaction - mean) > WEIGHT_SUM_TOLERANCE:
            raise ConfigError(
                f"{name}: interaction must be the mean of proactivity and personalization"
                f" when all three are given, got interaction={interaction:.6g} but"
                f" ({proactivity:.6g} + {personalization:.6g}) / 2 = {mean:.6g}"
            )
    return Weights(technical, proactivity, personalization)


def _constants(ppp: Mapping[str, Any], key: str, defaults: _Constants) -> _Constants:
    table = _table(ppp, key, f"ppp.{key}")
    given = {
        f.name: _magnitude(table, f.name, f"ppp.{key}.{f.name}")
        for f in fields(defaults)
        if f.name in table
    }
    return replace(defaults, **given)


def _show(value: object) -> str:
    """A value as TOML spells it, for error messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, date | time):
        return value.isoformat()
    return str(value)
