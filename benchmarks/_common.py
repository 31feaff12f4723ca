"""What the benchmarks share: a scratch folder that is removed whatever happens, and
`ppp-tui` run as a process that reads and writes nothing outside it."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

BIN = Path(sys.executable).parent


def ppp_tui() -> list[str]:
    """The command line installed beside this interpreter (else run as a module)."""
    script = BIN / "ppp-tui"
    return [str(script)] if script.exists() else [sys.executable, "-m", "ppp_tui"]


def _exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


@contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A new temporary folder, removed at the end however the benchmark ends: done, an
    error, ctrl+c, or SIGTERM / SIGHUP (turned into SystemExit so the removal runs)."""
    signals = [signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    previous = {signum: signal.signal(signum, _exit) for signum in signals}
    try:
        with tempfile.TemporaryDirectory(prefix=prefix) as folder:
            yield Path(folder)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def isolated_env(folder: Path) -> dict[str, str]:
    """The environment for `ppp-tui` processes: its config file (the defaults) and its
    default database in `folder`, so the user's own are neither read nor written. They
    run from cached bytecode, as an installed program does: with PYTHONDONTWRITEBYTECODE
    (set on some development machines) an editable install's every process would compile
    the package again (about 0.1 s), which the other programs timed beside it never do."""
    config = folder / "config.toml"
    if not config.exists():
        config.write_text("# ppp-tui benchmark: the default settings\n", encoding="utf-8")
    env = {**os.environ, "PPP_TUI_CONFIG": str(config), "PPP_TUI_DB": str(folder / "runs.db")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env
