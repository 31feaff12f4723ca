"""config.toml (SPEC 5, 7): where it is found, what it means, and saving tuned weights into it."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path

import platformdirs
import pytest

from ppp_tui.core.errors import ConfigError, PPPError
from ppp_tui.core.settings import (
    STAGE_TUNED,
    PersonalizationSettings,
    ProactivitySettings,
    Settings,
    Weights,
)
from ppp_tui.storage.config import config_path, db_path, load_settings
from ppp_tui.storage.config_write import (
    example_config,
    init_config,
    render_settings,
    save_weights,
    settings_document,
)

CONFIG = Path("config.toml")

# SPEC 5's example, as a user would keep it: comments, an unknown key and an unknown table.
USER_FILE = """\
# my agents' weights
[ppp]
enabled = true
missing_trajectory = "neutral"   # old runs have no trajectory
colour = "blue"                  # not ppp-tui's key

[ppp.weights]          # global
technical = 0.7
interaction = 0.3

[ppp.weights.plan]     # planning needs more dialogue
technical = 0.6
interaction = 0.4

# proactivity costs
[ppp.proactivity]
low_effort_bonus = 0.05
medium_penalty = 0.1
high_penalty = 0.5

[ppp.penalties]
lang_ita = 0.10

[tool.other]
keep = [1, 2, 3]
"""


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Work in an empty folder so `config.toml` in messages is the file's whole name."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PPP_TUI_CONFIG", raising=False)
    monkeypatch.delenv("PPP_TUI_DB", raising=False)
    return tmp_path


def load_text(text: str) -> Settings:
    CONFIG.write_text(text, encoding="utf-8")
    return load_settings(CONFIG)


# --- Where the files are ---------------------------------------------------------------------


def test_config_lookup_is_flag_then_environment_then_local_file_then_user_folder(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = platformdirs.user_config_path("ppp-tui") / "config.toml"
    assert config_path(None) == user
    CONFIG.write_text("")
    assert config_path(None) == CONFIG
    monkeypatch.setenv("PPP_TUI_CONFIG", "/etc/ppp.toml")
    assert config_path(None) == Path("/etc/ppp.toml")
    assert config_path("given.toml") == Path("given.toml")


def test_db_lookup_is_flag_then_environment_then_user_data_folder(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert db_path(None) == platformdirs.user_data_path("ppp-tui") / "runs.db"
    Path("runs.db").write_text("")  # a local file does not count for the database
    assert db_path(None) == platformdirs.user_data_path("ppp-tui") / "runs.db"
    monkeypatch.setenv("PPP_TUI_DB", str(here / "env.db"))
    assert db_path(None) == here / "env.db"
    assert db_path(Path("flag.db")) == Path("flag.db")


# --- Reading ---------------------------------------------------------------------------------


def test_no_file_means_the_spec_defaults(here: Path) -> None:
    settings = load_settings(Path("missing.toml"))
    assert settings == Settings()
    assert settings.weights == Weights.pair(0.7, 0.3)
    assert dict(settings.stage_weights) == {}


def test_the_spec_example_reads_as_written_and_unknown_keys_are_ignored(here: Path) -> None:
    settings = load_text(USER_FILE)
    assert settings.missing_trajectory == "neutral"
    assert settings.weights == Weights.pair(0.7, 0.3)
    assert settings.weights_for("plan") == Weights.pair(0.6, 0.4)
    assert settings.weights_for("audit") == Weights.pair(0.7, 0.3)  # no table: the global pair
    assert settings.proactivity == ProactivitySettings(0.05, 0.1, 0.5)
    assert dict(settings.penalties) == {"lang_ita": 0.1}


def test_any_stage_name_has_its_own_table_and_constants_override_one_by_one(here: Path) -> None:
    settings = load_text(
        "[ppp.weights.code-review]\ntechnical = 0.9\ninteraction = 0.1\n"
        "[ppp.personalization]\nmajor_penalty = 0.04\n"
        "[ppp.penalties]\nno_commas = 0.2\n"
    )
    assert dict(settings.stage_weights) == {"code-review": Weights.pair(0.9, 0.1)}
    assert settings.weights == Weights.pair(0.7, 0.3)
    assert settings.personalization == PersonalizationSettings(major_penalty=0.04)
    assert dict(settings.penalties) == {"commas": 0.2}  # seed 000's alias


def test_the_older_seed_000_form_is_read(here: Path) -> None:
    settings = load_text("[ppp]\ntechnical_weight = 0.8\ninteraction_weight = 0.2\n")
    assert settings.weights == Weights.pair(0.8, 0.2)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[ppp.weights.plan]\ntechnical = 0.5\ninteraction = 0.6\n",
            "config.toml: ppp.weights.plan: weights must sum to 1.0,"
            " got technical=0.5 + interaction=0.6 = 1.1",
        ),
        (
            "[ppp]\ntechnical_weight = 0.7\ninteraction_weight = 0.4\n",
            "config.toml: ppp: weights must sum to 1.0, got technical=0.7 + interaction=0.4 = 1.1",
        ),
        (
            "[ppp.weights]\ntechnical = 1.2\ninteraction = -0.2\n",
            "config.toml: ppp.weights: technical must be in [0, 1], got technical=1.2",
        ),
        (
            "[ppp.weights]\ntechnical = 0.7\n",
            "config.toml: ppp.weights: interaction is missing"
            " (technical and interaction go together)",
        ),
        (
            '[ppp.weights.plan]\ntechnical = "0.6"\ninteraction = 0.4\n',
            'config.toml: ppp.weights.plan.technical: expected a number, got "0.6"',
        ),
        (
            '[ppp.proactivity]\nhigh_penalty = "x"\n',
            'config.toml: ppp.proactivity.high_penalty: expected a number, got "x"',
        ),
        (
            "[ppp.proactivity]\nhigh_penalty = nan\n",
            "config.toml: ppp.proactivity.high_penalty: expected a finite number, got nan",
        ),
        (
            "[ppp.penalties]\nlang_ita = -0.1\n",
            "config.toml: ppp.penalties.lang_ita: must be >= 0, got -0.1",
        ),
        (
            "[ppp.personalization]\nwarning_penalty = true\n",
            "config.toml: ppp.personalization.warning_penalty: expected a number, got true",
        ),
        (
            '[ppp]\nmissing_trajectory = "zero"\n',
            'config.toml: ppp.missing_trajectory: expected "technical_only" or "neutral",'
            ' got "zero"',
        ),
        ("[ppp]\nenabled = 1\n", "config.toml: ppp.enabled: expected true or false, got 1"),
        ("ppp = 3\n", "config.toml: ppp: expected a table, got 3"),
        (
            "[ppp]\nweights = [0.7, 0.3]\n",
            "config.toml: ppp.weights: expected a table, got an array",
        ),
        (
            "[ppp]\ntechnical_weight = 0.7\ninteraction_weight = 0.3\n"
            "[ppp.weights]\ntechnical = 0.7\ninteraction = 0.3\n",
            "config.toml: ppp: technical_weight/interaction_weight and [ppp.weights] both set"
            " the global weights; keep one",
        ),
        (
            "[ppp]\nenabled = \n",
            "config.toml: invalid TOML: Invalid value (at line 2, column 11)",
        ),
    ],
)
def test_each_error_is_one_line_naming_the_file_the_key_and_the_value(
    here: Path, text: str, message: str
) -> None:
    with pytest.raises(ConfigError) as error:
        load_text(text)
    assert str(error.value) == message


def test_an_unreadable_file_is_a_config_error_too(here: Path) -> None:
    CONFIG.write_bytes(b"\xff[ppp]\n")
    with pytest.raises(ConfigError, match=r"^config\.toml: not UTF-8 text"):
        load_settings(CONFIG)
    Path("folder.toml").mkdir()
    with pytest.raises(ConfigError, match=r"^folder\.toml: is a directory"):
        load_settings(Path("folder.toml"))
    assert issubclass(ConfigError, PPPError)


# --- Saving ----------------------------------------------------------------------------------


def test_a_save_changes_only_the_weight_lines(here: Path) -> None:
    CONFIG.write_text(USER_FILE)
    save_weights(CONFIG, Weights.pair(0.65, 0.35), {"plan": Weights.pair(0.55, 0.45)})
    expected = USER_FILE.replace(
        "technical = 0.7\ninteraction = 0.3", "technical = 0.65\ninteraction = 0.35"
    ).replace("technical = 0.6\ninteraction = 0.4", "technical = 0.55\ninteraction = 0.45")
    assert CONFIG.read_text() == expected
    assert tomllib.loads(expected)["tool"] == {"other": {"keep": [1, 2, 3]}}


def test_a_new_stage_table_goes_after_the_weights_and_before_the_next_tables_comment(
    here: Path,
) -> None:
    CONFIG.write_text(USER_FILE)
    save_weights(CONFIG, stages={"audit": Weights.pair(0.8, 0.2)})
    new_table = "[ppp.weights.audit]\ntechnical = 0.8\ninteraction = 0.2\n\n"
    assert CONFIG.read_text() == USER_FILE.replace(
        "# proactivity costs\n", new_table + "# proactivity costs\n"
    )
    assert load_settings(CONFIG).weights_for("audit") == Weights.pair(0.8, 0.2)


def test_the_older_form_is_saved_in_its_form(here: Path) -> None:
    CONFIG.write_text("[ppp]\ntechnical_weight = 0.7  # seed 000\ninteraction_weight = 0.3\n")
    save_weights(CONFIG, Weights.pair(0.6, 0.4), {"plan": Weights.pair(0.5, 0.5)})
    assert CONFIG.read_text() == (
        "[ppp]\ntechnical_weight = 0.6  # seed 000\ninteraction_weight = 0.4\n\n"
        "[ppp.weights.plan]\ntechnical = 0.5\ninteraction = 0.5\n"
    )
    settings = load_settings(CONFIG)
    assert (settings.weights, settings.weights_for("plan")) == (
        Weights.pair(0.6, 0.4),
        Weights.pair(0.5, 0.5),
    )


def test_a_missing_file_is_created_with_only_the_weights(here: Path) -> None:
    path = here / "config.toml"
    save_weights(path, stages={"plan": Weights.pair(0.6, 0.4)})
    assert path.read_text() == "[ppp.weights.plan]\ntechnical = 0.6\ninteraction = 0.4\n"
    save_weights(path, Weights.pair(0.75, 0.25))
    assert path.read_text() == (
        "[ppp.weights]\ntechnical = 0.75\ninteraction = 0.25\n\n"
        "[ppp.weights.plan]\ntechnical = 0.6\ninteraction = 0.4\n"
    )


def test_tuned_weights_are_saved_to_six_decimals_and_round_ones_stay_round(here: Path) -> None:
    """Both weights of a pair have the same precision and sum to exactly 1.0."""
    tuned = Weights.from_technical(0.7078507078507079)
    save_weights(CONFIG, tuned, {"plan": Weights.pair(0.7, 0.3), "audit": Weights.pair(0.8, 0.2)})
    text = CONFIG.read_text()
    assert "[ppp.weights]\ntechnical = 0.707851\ninteraction = 0.292149\n" in text
    assert "[ppp.weights.plan]\ntechnical = 0.7\ninteraction = 0.3\n" in text
    assert "[ppp.weights.audit]\ntechnical = 0.8\ninteraction = 0.2\n" in text
    saved = load_settings(CONFIG).weights
    assert saved == Weights.pair(0.707851, 0.292149)
    assert saved.technical + saved.interaction == 1.0


def test_every_saved_pair_sums_to_exactly_one() -> None:
    from ppp_tui.storage.config_write import saved_pair

    for k in range(0, 1_000_001, 997):
        pair = saved_pair(Weights.from_technical(k / 1_000_000 + 3.3e-8))
        assert pair.technical + pair.interaction == 1.0
        assert len(repr(pair.technical).split(".")[-1]) <= 6


def test_the_provenance_note_is_replaced_not_accumulated(here: Path) -> None:
    CONFIG.write_text("[ppp.weights]\ntechnical = 0.7  # chosen by hand\ninteraction = 0.3\n")
    first = "tuned 2026-11-22 14:03 from 412 marked runs, mean regret 0.031 -> 0.012"
    save_weights(CONFIG, Weights.pair(0.64, 0.36), note=first)
    # The user's own comment keeps its line to itself; ours goes on the line above.
    assert CONFIG.read_text() == (
        f"[ppp.weights]\n# ppp-tui: {first}\ntechnical = 0.64  # chosen by hand\n"
        "interaction = 0.36\n"
    )
    save_weights(CONFIG, Weights.pair(0.66, 0.34), note="tuned 2026-11-23 from 450 marked runs")
    assert CONFIG.read_text() == (
        "[ppp.weights]\n# ppp-tui: tuned 2026-11-23 from 450 marked runs\n"
        "technical = 0.66  # chosen by hand\ninteraction = 0.34\n"
    )
    # Weights saved without a note drop ours: it described weights no longer there.
    save_weights(CONFIG, Weights.pair(0.7, 0.3))
    assert CONFIG.read_text() == (
        "[ppp.weights]\ntechnical = 0.7  # chosen by hand\ninteraction = 0.3\n"
    )


def test_a_note_on_a_new_stage_table_sits_beside_its_weights(here: Path) -> None:
    save_weights(CONFIG, stages={"plan": Weights.pair(0.6, 0.4)}, note="tuned from 12\nmarked runs")
    assert CONFIG.read_text() == (
        "[ppp.weights.plan]\ntechnical = 0.6  # ppp-tui: tuned from 12 marked runs\n"
        "interaction = 0.4\n"
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[ppp.weights]\ntechnical = \n", "invalid TOML"),
        ("[ppp.weights.plan]\ntechnical = 0.5\ninteraction = 0.6\n", "must sum to 1.0"),
    ],
)
def test_an_invalid_file_is_never_overwritten(here: Path, text: str, reason: str) -> None:
    CONFIG.write_text(text)
    before = CONFIG.read_bytes()
    with pytest.raises(ConfigError, match=rf"^config\.toml: .*{reason}.*weights not saved"):
        save_weights(CONFIG, Weights.pair(0.6, 0.4))
    assert CONFIG.read_bytes() == before


def test_an_inline_weights_table_is_updated_in_place_but_cannot_take_a_stage(here: Path) -> None:
    CONFIG.write_text("[ppp]\nweights = { technical = 0.7, interaction = 0.3 }\n")
    save_weights(CONFIG, Weights.pair(0.6, 0.4), note="no room for me")
    assert CONFIG.read_text() == "[ppp]\nweights = { technical = 0.6, interaction = 0.4 }\n"
    with pytest.raises(ConfigError, match=r"^config\.toml: cannot update this file \(Inline"):
        save_weights(CONFIG, stages={"plan": Weights.pair(0.5, 0.5)})
    assert CONFIG.read_text() == "[ppp]\nweights = { technical = 0.6, interaction = 0.4 }\n"


def test_a_stage_cannot_be_named_like_a_weight(here: Path) -> None:
    with pytest.raises(ConfigError, match="'technical' cannot name a stage table"):
        save_weights(CONFIG, stages={"technical": Weights.pair(0.6, 0.4)})
    assert not CONFIG.exists()


def test_a_failed_rename_leaves_the_old_file_and_no_temporary_file(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    CONFIG.write_text(USER_FILE)

    def crash(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(ConfigError, match=r"^config\.toml: cannot write \(No space left"):
        save_weights(CONFIG, Weights.pair(0.6, 0.4))
    assert CONFIG.read_text() == USER_FILE
    # The writers' lock file stays (deleting it could race a waiting writer).
    assert sorted(p.name for p in here.iterdir()) == [".config.toml.lock", "config.toml"]


def test_a_save_keeps_the_file_mode_and_a_symlink(here: Path) -> None:
    real = here / "dotfiles" / "ppp.toml"
    real.parent.mkdir()
    real.write_text(USER_FILE)
    real.chmod(0o600)
    CONFIG.symlink_to(real)
    save_weights(CONFIG, Weights.pair(0.6, 0.4))
    assert CONFIG.is_symlink()
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert load_settings(real).weights == Weights.pair(0.6, 0.4)


def test_windows_line_endings_stay_windows_line_endings(here: Path) -> None:
    CONFIG.write_bytes(b"[ppp.weights]\r\ntechnical = 0.7\r\ninteraction = 0.3\r\n")
    save_weights(CONFIG, Weights.pair(0.6, 0.4), {"plan": Weights.pair(0.5, 0.5)})
    assert CONFIG.read_bytes() == (
        b"[ppp.weights]\r\ntechnical = 0.6\r\ninteraction = 0.4\r\n\r\n"
        b"[ppp.weights.plan]\r\ntechnical = 0.5\r\ninteraction = 0.5\r\n"
    )


# --- The example file and the effective configuration ----------------------------------------


def test_init_writes_the_spec_example_with_the_seeds_stage_recommendations(here: Path) -> None:
    assert init_config(CONFIG) == CONFIG
    assert CONFIG.read_text() == example_config()
    settings = load_settings(CONFIG)
    assert settings.weights == Weights.pair(0.7, 0.3)
    assert dict(settings.stage_weights) == dict(STAGE_TUNED)
    assert settings.weights_for("validate") == Weights.pair(0.75, 0.25)
    assert (settings.proactivity, settings.personalization) == (
        ProactivitySettings(),
        PersonalizationSettings(),
    )
    assert "# R_Proact" in CONFIG.read_text()


def test_init_refuses_to_overwrite_unless_forced(here: Path) -> None:
    CONFIG.write_text(USER_FILE)
    with pytest.raises(ConfigError, match=r"^config\.toml: already exists"):
        init_config(CONFIG)
    assert CONFIG.read_text() == USER_FILE
    init_config(CONFIG, force=True)
    assert CONFIG.read_text() == example_config()


def test_the_example_file_takes_a_tuned_save_like_any_other(here: Path) -> None:
    init_config(CONFIG)
    save_weights(
        CONFIG, Weights.pair(0.62, 0.38), {"audit": Weights.pair(0.85, 0.15)}, note="tuned"
    )
    expected = (
        example_config()
        .replace(
            "[ppp.weights]\ntechnical = 0.7\ninteraction = 0.3",
            "[ppp.weights]\ntechnical = 0.62  # ppp-tui: tuned\ninteraction = 0.38",
        )
        .replace(
            "[ppp.weights.audit]\ntechnical = 0.8\ninteraction = 0.2",
            "[ppp.weights.audit]\ntechnical = 0.85  # ppp-tui: tuned\ninteraction = 0.15",
        )
    )
    assert CONFIG.read_text() == expected


def test_the_effective_configuration_shows_every_constant_and_reads_back(here: Path) -> None:
    settings = load_text(USER_FILE)
    document = settings_document(settings)
    assert document["missing_trajectory"] == "neutral"
    assert document["weights"] == {
        "technical": 0.7,
        "interaction": 0.3,
        "plan": {"technical": 0.6, "interaction": 0.4},
    }
    assert document["personalization"]["critical_penalty"] == 0.05
    # Every catalogue preference with the penalty that applies: lang_multi from the catalogue.
    assert (document["penalties"]["lang_ita"], document["penalties"]["lang_multi"]) == (0.1, 0.1)
    assert len(document["penalties"]) == 20

    text = render_settings(settings)
    assert tomllib.loads(text)["ppp"] == document
    assert settings_document(load_text(text)) == document
