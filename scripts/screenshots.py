"""Regenerate screenshots/: the real app on a demo database, saved as SVG and PNG.

    python scripts/screenshots.py

Needs the dev extra (cairosvg) for the PNGs; the SVGs are written regardless. The PNGs
are drawn with DejaVu Sans Mono (DejaVu Sans for the plots' Braille dots), shipped in
scripts/fonts/ with their licence, so the terminal's columns line up whatever fonts the
machine has.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
from pathlib import Path

from ppp_tui.app.app import PPPApp
from ppp_tui.app.widgets.conversation import Conversation
from ppp_tui.app.widgets.slider import WeightSlider
from ppp_tui.storage.demo import write_demo

OUT = Path(__file__).resolve().parent.parent / "screenshots"
FONTS = Path(__file__).resolve().parent / "fonts"
FONT = "DejaVu Sans Mono"
BRAILLE_FONT = "DejaVu Sans"
SIZE = (150, 44)
SMALL = (80, 24)  # the smallest size every screen serves
SHOWN_RUN = "demo-001963"  # four agents, with questions of every effort
SESSION_RUN = "session-d5ea38829bd9"  # the demo's run of three agents' sessions


def _app(db: Path, config: Path) -> PPPApp:
    app = PPPApp(db, config)
    app.sub_title = "reviewer you · demo.db"  # not the temporary folder's name
    return app


async def shoot(db: Path, config: Path) -> list[Path]:
    app = _app(db, config)
    saved = []
    async with app.run_test(size=SIZE) as pilot:
        await app.load_done.wait()
        await pilot.pause()

        def save(name: str) -> None:
            saved.append(Path(app.save_screenshot(f"{name}.svg", path=str(OUT))))

        save("runs")
        app.open_run(SHOWN_RUN)
        await pilot.pause()
        app.screen.query_one(WeightSlider).focus()
        await pilot.press("left", "left", "left", "left", "left")
        await pilot.pause(1.2)
        save("run")
        await pilot.press("m", ")", ")", ")")
        await pilot.pause(1.2)
        save("flip-map")
        await pilot.press("question_mark")
        await pilot.pause()
        save("help")
        await pilot.press("escape", "t")
        await app.workers.wait_for_complete()
        await pilot.pause(0.5)
        save("tuning")
        await pilot.press("escape", "d")
        await _settled(app, pilot)
        save("dashboard")
    saved.append(await shoot_small_dashboard(db, config))
    saved.append(await shoot_session(db, config, SIZE, "session"))
    saved.append(await shoot_session(db, config, SMALL, "session-80x24"))
    saved.append(await shoot_changes(db, config))
    return saved


async def shoot_changes(db: Path, config: Path) -> Path:
    """The same run's Changes tab: the files its agents edited side by side, and the
    diffs of the first file and agent."""
    from textual.widgets import TabbedContent

    from ppp_tui.app.widgets.files_table import FilesTable

    app = _app(db, config)
    async with app.run_test(size=SIZE) as pilot:
        await app.load_done.wait()
        await pilot.pause()
        app.open_run(SESSION_RUN)
        await pilot.pause(0.5)
        app.screen.query_one("#detail", TabbedContent).active = "tab-changes"
        await pilot.pause(0.3)
        app.screen.query_one(FilesTable).focus()
        await pilot.press("right")
        await pilot.pause(0.5)
        return Path(app.save_screenshot("changes.svg", path=str(OUT)))


async def shoot_session(db: Path, config: Path, size: tuple[int, int], name: str) -> Path:
    """The demo's run read from three agents' sessions: claude-code's conversation, its
    thinking shown, scrolled to its questions at the small size."""
    app = _app(db, config)
    async with app.run_test(size=size) as pilot:
        await app.load_done.wait()
        await pilot.pause()
        app.open_run(SESSION_RUN)
        await pilot.pause(0.5)
        await pilot.press("down", "h")
        await pilot.pause(0.5)
        if size == SMALL:
            app.screen.query_one(Conversation).scroll_to(y=6, animate=False)
            await pilot.pause(0.3)
        return Path(app.save_screenshot(f"{name}.svg", path=str(OUT)))


async def shoot_small_dashboard(db: Path, config: Path) -> Path:
    """The dashboard at 80x24."""
    app = _app(db, config)
    async with app.run_test(size=SMALL) as pilot:
        await app.load_done.wait()
        await pilot.pause()
        await pilot.press("d")
        await _settled(app, pilot)
        return Path(app.save_screenshot("dashboard-80x24.svg", path=str(OUT)))


async def _settled(app: PPPApp, pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.pause()
    while getattr(app.screen, "computing", False):
        await pilot.pause(0.05)
    await pilot.pause(0.5)


def use_shipped_font() -> None:
    """Let fontconfig (through cairo) find the shipped font: a config that adds its folder
    to the system's. Call before cairosvg is imported."""
    conf = Path(tempfile.mkdtemp(prefix="ppp-fonts-")) / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n'
        f"  <dir>{FONTS}</dir>\n"
        '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n'
        "</fontconfig>\n"
    )
    os.environ["FONTCONFIG_FILE"] = str(conf)


# Text runs with Braille patterns (the plots): DejaVu Sans Mono has none, and cairo takes
# each run's glyphs from one font. Each run keeps its cells' width (textLength).
_BRAILLE_RUN = re.compile(r"<text (?=[^>]*>[^<]*[\u2800-\u28ff])")


def monospaced(svg: str) -> str:
    """The SVG with its terminal text in the shipped monospace font (textual names a web
    font that cairosvg cannot fetch, and falls back to a proportional one), the plots'
    Braille runs in DejaVu Sans."""
    svg = re.sub(r"font-family: Fira Code, monospace;", f'font-family: "{FONT}";', svg)
    return _BRAILLE_RUN.sub(f'<text style="font-family: {BRAILLE_FONT}" ', svg)


def render_png(svg: Path, width: int = 1800) -> Path:
    import cairosvg

    png = svg.with_suffix(".png")
    cairosvg.svg2png(
        bytestring=monospaced(svg.read_text(encoding="utf-8")).encode("utf-8"),
        write_to=str(png),
        output_width=width,
    )
    return png


def main() -> None:
    OUT.mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="ppp-shots-"))
    db = folder / "demo.db"
    os.environ["PPP_TUI_REVIEWER"] = "you"  # the demo's marks, whoever makes the pictures
    write_demo(db, 2000, seed=0, sessions=True)
    saved = asyncio.run(shoot(db, folder / "config.toml"))
    use_shipped_font()
    try:
        import cairosvg  # noqa: F401
    except ImportError:
        print("cairosvg is not installed: SVGs only (pip install -e '.[dev]')")
        return
    for svg in saved:
        small = svg.stem.endswith("80x24")
        print(f"wrote {render_png(svg, 1000 if small else 1800)}")


if __name__ == "__main__":
    main()
