"""The command palette's own commands (ctrl+p): open a run by its id, the tuning panel,
the dashboard, each preset, save, export what is on screen. Textual adds its own
(themes, quit, keys, screenshot)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from itertools import islice
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from ..core.settings import PRESETS
from .text import literal

if TYPE_CHECKING:
    from .app import PPPApp

RUNS_LISTED = 20  # run ids offered for one query (a database can hold 100k)


class AppCommands(Provider):
    """What the app's keys do, and opening any run by typing its id."""

    @property
    def ppp(self) -> PPPApp:
        return cast("PPPApp", self.app)

    def commands(self) -> Iterator[tuple[str, str, Callable[[], object]]]:
        """(name, help, what it runs) of every command but the runs'."""
        app = self.ppp
        yield (
            "Tune",
            "The tuning panel: regret and agreement over the weights, the optimum",
            app.action_tune,
        )
        yield (
            "Dashboard",
            "Interaction over time, violations, effort, PPP on vs off",
            app.action_dashboard,
        )
        for chosen in PRESETS:
            yield (
                f"Preset: {chosen.label}",
                "Apply it to the weights on screen (a run's scope, else global)",
                partial(app.apply_preset_here, chosen.key),
            )
        yield (
            "Leaderboard",
            "Agents' strengths from your marks, beside the weights' picks",
            app.action_leaderboard,
        )
        yield (
            "Switch reviewer",
            "Whose marks are shown, counted and recorded",
            app.action_reviewer,
        )
        yield "Save weights", "Save the weights to config.toml", app.action_save
        for fmt in ("csv", "json"):
            yield (
                f"Export {fmt.upper()}",
                "Write the runs on screen, every agent's scores, to a file here",
                partial(app.export_shown, fmt),
            )

    async def discover(self) -> Hits:
        for name, help_text, command in self.commands():
            yield DiscoveryHit(name, command, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, command in self.commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), command, help=help_text)
        for run_id, exact in self._runs(query):
            yield Hit(
                1.0 if exact else 0.5,  # the run typed in full first
                Content(f"Open run {literal(run_id, True)}"),
                partial(self.ppp.open_run, run_id),
                text=f"Open run {run_id}",
                help="Open this run side by side",
            )

    def _runs(self, query: str) -> list[tuple[str, bool]]:
        """The runs whose id holds the query (or the query after "open"), the exact one
        first."""
        workspace = self.ppp.workspace
        needle = query.strip()
        if needle.lower().startswith("open "):
            needle = needle[5:].strip()
        if workspace is None or not workspace.loaded or not needle:
            return []
        found: list[tuple[str, bool]] = []
        if needle in workspace.index:
            found.append((needle, True))
        lowered = needle.lower()
        others = (
            info.id for info in workspace.infos if lowered in info.id.lower() and info.id != needle
        )
        found += [(run_id, False) for run_id in islice(others, RUNS_LISTED - len(found))]
        return found
