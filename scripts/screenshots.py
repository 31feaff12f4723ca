"""Regenerate screenshots/: the real app on a demo database, saved as SVG and PNG.

    python scripts/screenshots.py

Needs the dev extra (cairosvg) for the PNGs; the SVGs are written regardless.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from ppp_tui.app.app import PPPApp
from ppp_tui.app.slider import WeightSlider
from ppp_tui.storage.demo import write_demo

OUT = Path(__file__).resolve().parent.parent / "screenshots"
SIZE = (150, 44)


async def shoot(db: Path, config: Path) -> list[Path]:
    app = PPPApp(db, config)
    saved = []
    async with app.run_test(size=SIZE) as pilot:
        await app.load_done.wait()
        await pilot.pause()

        def save(name: str) -> None:
            saved.append(Path(app.save_screenshot(f"{name}.svg", path=str(OUT))))

        save("runs")
        await pilot.press(*["down"] * 7, "enter")
        await pilot.pause()
        app.screen.query_one(WeightSlider).focus()
        await pilot.press("left", "left", "left", "left", "left")
        await pilot.pause(1.2)
        save("run")
        await pilot.press("question_mark")
        await pilot.pause()
        save("help")
        await pilot.press("escape", "t")
        await app.workers.wait_for_complete()
        await pilot.pause(0.5)
        save("tuning")
        await pilot.press("escape", "d")
        await pilot.pause()
        while getattr(app.screen, "computing", False):
            await pilot.pause(0.05)
        await pilot.pause(0.5)
        save("dashboard")
    return saved


def main() -> None:
    OUT.mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="ppp-shots-"))
    db = folder / "demo.db"
    write_demo(db, 2000, seed=0)
    saved = asyncio.run(shoot(db, folder / "config.toml"))
    try:
        import cairosvg
    except ImportError:
        print("cairosvg is not installed: SVGs only (pip install -e '.[dev]')")
        return
    for svg in saved:
        cairosvg.svg2png(url=str(svg), write_to=str(svg.with_suffix(".png")), output_width=1800)
        print(f"wrote {svg.with_suffix('.png')}")


if __name__ == "__main__":
    main()
