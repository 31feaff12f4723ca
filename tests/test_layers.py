"""The layers import downwards only: the core and storage never pull in textual."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHECK = """
import sys
import ppp_tui.core.columns, ppp_tui.core.arrays, ppp_tui.core.runs, ppp_tui.core.effort
import ppp_tui.core.arrays, ppp_tui.core.by_slot, ppp_tui.core.tuning, ppp_tui.core.tuning2d
import ppp_tui.storage.store, ppp_tui.storage.config, ppp_tui.storage.demo
import ppp_tui.storage.speckit, ppp_tui.core.scores, ppp_tui.cli, ppp_tui.analysis.dashboard
import ppp_tui.cli.documents, ppp_tui.cli.tables
loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'textual_plotext'))
print(','.join(loaded))
"""


def test_core_storage_and_cli_never_import_textual() -> None:
    result = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_the_core_does_no_io_imports() -> None:
    check = (
        "import sys, ppp_tui.core.arrays, ppp_tui.core.tuning, ppp_tui.core.tuning2d,"
        " ppp_tui.core.runs, ppp_tui.core.scoring, ppp_tui.core.scores, ppp_tui.core.regions;"
        "print(','.join(m for m in ('sqlite3', 'sqlite_utils', 'tomlkit') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert result.stdout.strip() == ""


FIRST_PAGE = """
import sys
from pathlib import Path
import ppp_tui.cli
from ppp_tui.app.app import PPPApp
from ppp_tui.app.first_page import first_page
from ppp_tui.core.settings import Settings
from ppp_tui.storage.store import Store
with Store.open(Path(sys.argv[1])) as store:
    page = first_page(store, Settings(), 50)
print(len(page[0].selected), *(m in sys.modules for m in sys.argv[2:]))
"""
# What the first screen comes up without: numpy takes about 80 ms to import, scipy and
# plotext (the tuning and dashboard screens' figures) more; tomlkit about 8 ms (it only
# writes config.toml); the other commands, the importer, the full-text search and the
# preference checkers (their patterns) together about 60 ms.
NOT_AT_START = (
    "numpy",
    "scipy",
    "plotext",
    "textual_plotext",
    "tomlkit",
    "sqlite_utils",
    "ppp_tui.app.workspace",
    "ppp_tui.cli.import_export",
    "ppp_tui.cli.scoring",
    "ppp_tui.core.preferences.checkers",
    "ppp_tui.storage.importer",
    "ppp_tui.storage.search",
)


def test_the_app_draws_its_first_page_before_numpy_and_tomlkit_are_imported(
    demo_db: Path,
) -> None:
    result = subprocess.run(
        [sys.executable, "-c", FIRST_PAGE, str(demo_db), *NOT_AT_START],
        capture_output=True,
        text=True,
    )
    assert result.stdout.split() == ["50", *["False"] * len(NOT_AT_START)], result.stderr


# `ppp-tui browse` as a user starts it, headless: at its first frame (the runs screen with
# its first page of runs), which of the modules above are loaded.
FIRST_FRAME = """
import sys
from textual.app import App
display = App._display
def first_frame(self, screen, update):
    display(self, screen, update)
    if update is not None and type(screen).__name__ == "RunsScreen" and screen.table.display:
        loaded = [m for m in sys.argv[1:] if m in sys.modules]
        print("loaded:", *loaded, "rows:", len(screen.table.order), flush=True)
        self.exit()
App._display = first_frame
from ppp_tui.app.app import PPPApp
run = PPPApp.run
PPPApp.run = lambda self, **options: run(self, headless=True, size=(120, 40))
from ppp_tui.cli import main
sys.argv[1:] = ["browse", "--db", DB, "--config", CONFIG]
main()
"""


def test_the_first_frame_comes_before_the_heavy_imports(demo_db: Path, tmp_path: Path) -> None:
    # A test that fails if an eager import comes back, anywhere on the way to the first
    # frame: the command line, the app's modules, the first page.
    code = FIRST_FRAME.replace("DB", repr(str(demo_db))).replace(
        "CONFIG", repr(str(tmp_path / "config.toml"))
    )
    result = subprocess.run(
        [sys.executable, "-c", code, *NOT_AT_START], capture_output=True, text=True, timeout=120
    )
    assert result.stdout.split() == ["loaded:", "rows:", "200"], result.stderr[-3000:]


def test_the_import_window_default_is_the_grouping_one() -> None:
    # The import command keeps its own copy, so that the grouping module loads with it.
    from ppp_tui.cli.import_export import DEFAULT_WINDOW_HOURS
    from ppp_tui.core.sessions.grouping import DEFAULT_WINDOW_HOURS as GROUPING_DEFAULT

    assert DEFAULT_WINDOW_HOURS == GROUPING_DEFAULT


APP = Path(__file__).resolve().parent.parent / "ppp_tui" / "app"


def _imported(path: Path) -> set[str]:
    """Every module `path` imports (at the top, in functions, or for type checking),
    as an absolute name."""
    import ast

    package = ".".join(path.relative_to(APP.parent.parent).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                found.add(".".join([*base, *([node.module] if node.module else [])]))
            elif node.module:
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_screens_and_widgets_never_import_the_app_module() -> None:
    """A screen talks to the app through messages and the typed interface in
    services.py; a widget knows neither the app nor the screens."""
    for folder in ("screens", "widgets"):
        for path in sorted((APP / folder).glob("*.py")):
            imported = _imported(path)
            assert "ppp_tui.app.app" not in imported, path.name
            if folder == "widgets":
                assert not any(m.startswith("ppp_tui.app.screens") for m in imported), path.name


def test_the_app_folder_keeps_about_a_dozen_modules_at_its_top() -> None:
    assert len(list(APP.glob("*.py"))) <= 12


def test_no_module_is_over_700_lines() -> None:
    """Each module keeps to one job a reader can hold: data tables live beside the code
    in data files (as search_words.json), not in a module."""
    package = Path(__file__).resolve().parent.parent / "ppp_tui"
    lengths = {
        str(path.relative_to(package)): len(path.read_text(encoding="utf-8").splitlines())
        for path in package.rglob("*.py")
    }
    assert len(lengths) > 100
    assert {name: n for name, n in lengths.items() if n > 700} == {}
