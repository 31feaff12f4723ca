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
print(len(page[0].selected), 'numpy' in sys.modules, 'tomlkit' in sys.modules)
"""


def test_the_app_draws_its_first_page_before_numpy_and_tomlkit_are_imported(
    demo_db: Path,
) -> None:
    # numpy takes about 80 ms to import and tomlkit about 8 ms (it only writes config.toml):
    # the first screen comes up without them.
    result = subprocess.run(
        [sys.executable, "-c", FIRST_PAGE, str(demo_db)], capture_output=True, text=True
    )
    assert result.stdout.split() == ["50", "False", "False"], result.stderr
