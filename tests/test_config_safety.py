"""config.toml is only ever written where it is safe: never through a device, a pipe, a link
to nothing or another program's file; odd but valid files (a byte order mark, dotted keys)
are saved correctly or refused with the reason."""

from __future__ import annotations

import os
import signal
import stat
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import platformdirs
import pytest
from click.testing import CliRunner, Result

from ppp_tui.cli import cli
from ppp_tui.core.errors import ConfigError
from ppp_tui.core.settings import Weights
from ppp_tui.storage.config import config_path, ignored_local_config, load_settings
from ppp_tui.storage.config_write import init_config, save_weights

CONFIG = Path("config.toml")
PAIR = "[ppp.weights]\ntechnical = 0.7\ninteraction = 0.3\n"
HUGO = 'baseURL = "https://example.org/"\ntitle = "My blog"\n\n[params]\ntheme = "dark"\n'


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PPP_TUI_CONFIG", raising=False)
    monkeypatch.delenv("PPP_TUI_DB", raising=False)
    # The user config folder, inside the test's folder.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return tmp_path


@pytest.fixture
def no_hang() -> Iterator[None]:
    """Fail instead of hanging for ever if something opens a named pipe for reading."""

    def hung(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError("blocked on the named pipe")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(5)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def error_line(result: Result) -> str:
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# --- Special files at the config path ---------------------------------------------------------


def test_a_named_pipe_is_never_opened_for_reading_or_replaced(here: Path, no_hang: None) -> None:
    os.mkfifo(CONFIG)
    line = error_line(run("config", "validate", "--config", "config.toml"))
    assert line == "Error: config.toml: is a named pipe (FIFO), not a config file"
    with pytest.raises(
        ConfigError, match=r"^config\.toml: is a named pipe \(FIFO\), not a regular"
    ):
        save_weights(CONFIG, Weights.pair(0.6, 0.4))
    assert stat.S_ISFIFO(os.lstat(CONFIG).st_mode)


def test_a_character_device_is_refused_and_stays_a_device(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stand-in: a regular file that os.stat and os.lstat call a character device.
    device = here / "null"
    device.write_text("")
    real_stat, real_lstat = os.stat, os.lstat

    def as_device(real: type[os.stat_result] | object) -> object:
        def call(path: object, *args: object, **kwargs: object) -> os.stat_result:
            result = real(path, *args, **kwargs)  # type: ignore[operator]
            if Path(str(path)).name != "null":
                return result
            fields = list(result)
            fields[0] = stat.S_IFCHR | 0o666
            return os.stat_result(fields)

        return call

    monkeypatch.setattr(os, "stat", as_device(real_stat))
    monkeypatch.setattr(os, "lstat", as_device(real_lstat))
    with pytest.raises(ConfigError, match=r"null: is a character device, not a config file"):
        load_settings(device)
    with pytest.raises(ConfigError, match=r"null: is a character device, not a regular file"):
        save_weights(device, Weights.pair(0.6, 0.4))
    with pytest.raises(ConfigError, match=r"null: is a character device, not a regular file"):
        init_config(device, force=True)
    monkeypatch.undo()
    assert device.read_text() == "" and sorted(p.name for p in here.iterdir()) == ["null"]


def test_a_dangling_symlink_does_not_create_its_target(here: Path) -> None:
    CONFIG.symlink_to(here / "elsewhere" / "ppp.toml")
    with pytest.raises(ConfigError, match=r"is a symbolic link to .*ppp\.toml, which does not"):
        save_weights(CONFIG, Weights.pair(0.6, 0.4))
    assert not (here / "elsewhere").exists()


def test_a_symlink_to_another_programs_toml_gets_no_ppp_tables(here: Path) -> None:
    other = here / "pyproject.toml"
    other.write_text('[project]\nname = "x"\n')
    CONFIG.symlink_to(other)
    with pytest.raises(ConfigError, match=r"has no \[ppp\] table \(another program's file\?\)"):
        save_weights(CONFIG, Weights.pair(0.6, 0.4))
    assert other.read_text() == '[project]\nname = "x"\n'


def test_a_file_in_a_missing_folder_is_refused_but_the_user_config_folder_is_made(
    here: Path,
) -> None:
    with pytest.raises(ConfigError, match=r"no such folder .*nowhere; not written"):
        save_weights(here / "nowhere" / "config.toml", Weights.pair(0.6, 0.4))
    assert not (here / "nowhere").exists()
    user = platformdirs.user_config_path("ppp-tui") / "config.toml"
    assert user.is_relative_to(here / "xdg")
    save_weights(user, Weights.pair(0.6, 0.4))
    assert load_settings(user).weights == Weights.pair(0.6, 0.4)


# --- ./config.toml that is another program's ------------------------------------------------


def test_another_programs_config_toml_here_is_not_adopted_and_never_edited(
    here: Path, tmp_path: Path
) -> None:
    CONFIG.write_text(HUGO)
    user = platformdirs.user_config_path("ppp-tui") / "config.toml"
    assert config_path(None) == user
    note = "./config.toml ignored: it has no [ppp] table (another program's file?)"
    assert ignored_local_config(None) == note
    shown = run("config", "show", "--db", str(tmp_path / "runs.db"))
    assert shown.exit_code == 0
    assert shown.stdout.splitlines()[:2] == [
        f"# config: {user} (no file: the defaults apply)",
        f"# {note}",
    ]
    init = run("config", "init", "--db", str(tmp_path / "runs.db"))
    assert init.stdout == f"wrote {user}\n" and init.stderr == f"note: {note}\n"
    assert CONFIG.read_text() == HUGO
    # Once it is ppp-tui's, it is the one.
    CONFIG.write_text(
        HUGO.replace("[params]", "[ppp.weights]\ntechnical = 0.6\ninteraction = 0.4\n\n[params]")
    )
    assert config_path(None) == CONFIG and ignored_local_config(None) is None


def test_a_broken_ppp_config_here_is_adopted_so_its_error_is_seen(here: Path) -> None:
    CONFIG.write_text("[ppp.weights]\ntechnical = 0.7\ninteraction = \n")
    assert config_path(None) == CONFIG
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_settings(CONFIG)


# --- Odd but valid files ------------------------------------------------------------------------


def test_a_byte_order_mark_is_read_and_kept_on_save(here: Path) -> None:
    CONFIG.write_bytes(b"\xef\xbb\xbf# mine\n" + PAIR.encode())
    assert load_settings(CONFIG).weights == Weights.pair(0.7, 0.3)
    save_weights(CONFIG, Weights.pair(0.6, 0.4))
    assert CONFIG.read_bytes() == (
        b"\xef\xbb\xbf# mine\n[ppp.weights]\ntechnical = 0.6\ninteraction = 0.4\n"
    )


@pytest.mark.parametrize(
    ("text", "dotted"),
    [
        ("ppp.weights.technical = 0.7\nppp.weights.interaction = 0.3\n", "ppp.weights.technical"),
        ("[ppp]\nweights.technical = 0.7\nweights.interaction = 0.3\n", "ppp.weights.technical"),
        (
            "[ppp.weights]\nplan.technical = 0.6\nplan.interaction = 0.4\n",
            "ppp.weights.plan.technical",
        ),
    ],
)
def test_dotted_keys_validate_and_a_save_says_why_it_is_refused(
    here: Path, text: str, dotted: str
) -> None:
    CONFIG.write_text(text)
    load_settings(CONFIG)  # valid
    with pytest.raises(ConfigError) as caught:
        save_weights(CONFIG, Weights.pair(0.6, 0.4), {"plan": Weights.pair(0.5, 0.5)})
    message = str(caught.value)
    assert message.startswith(
        f"config.toml: cannot update this file ({dotted} is set with a dotted key"
    )
    assert "[ppp.weights]" in message and message.endswith("weights not saved")
    assert CONFIG.read_text() == text


# --- Leftovers of a killed save ---------------------------------------------------------------


def test_temporary_files_of_a_killed_save_are_removed_by_the_next(here: Path) -> None:
    CONFIG.write_text(PAIR)
    (here / ".config.toml.0123456789ab.tmp").write_text("half a save")
    (here / ".config.toml.notours.tmp").write_text("someone else's")
    save_weights(CONFIG, Weights.pair(0.6, 0.4))
    assert sorted(p.name for p in here.iterdir()) == [
        ".config.toml.lock",
        ".config.toml.notours.tmp",
        "config.toml",
    ]
