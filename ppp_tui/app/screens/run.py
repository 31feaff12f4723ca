"""One run's agents side by side, with the weights bar (imported when a run opens).

A little over 600 lines, and not split further: what it says about the data is in
run_texts.py, the conversation in conversation.py; the rest is one screen's wiring.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import (
    DataTable,
    Footer,
    Header,
    Static,
    TabbedContent,
    TabPane,
)

from ...analysis.describe import technical_text
from ...core.early_stop import analyse
from ...core.model import Agent, AskedWith, Run
from ...core.regions import regions
from ...core.relevance import task_type
from ...core.scoring import AgentScore, Ranking, rank_run, violation_penalty
from ...core.sensitivity import flips
from ...core.sessions.waiting import MARK as WAITING
from ...core.sessions.waiting import agent_waiting
from ...core.settings import Weights
from ...safe_text import number
from ..messages import MarkChanged, TechnicalRated, UngroupRun, WeightsChanged, WeightsReset
from ..services import AppServices
from ..text import cell, literal, plain
from ..widgets.changes import changes_panel
from ..widgets.colours import CAUTION, colour
from ..widgets.conversation import Conversation, Line, conversation_lines
from ..widgets.fitted_table import FittedTable
from ..widgets.flip_map import FlipMap, FlipMapPanel
from ..widgets.run_texts import (
    AGENT_COLUMNS,
    VIOLATION_COLUMNS,
    agent_facts,
    answer_width,
    consensus_summary,
    consensus_text,
    has_steps,
    has_thinking,
    question_cells,
)
from ..widgets.table_rows import cursor_key
from ..widgets.weight_sliders import Triple, WeightSliders
from ..widgets.weights_bar import WeightsBar
from .rate import RateScreen
from .run_keys import RunKeys

# The header shows this many lines of the task (a session's first prompt), one below
# TALL rows of terminal: the agents and the conversation need the room.
TASK_LINES = 2
TALL = 30

# In the footer of a run of sessions only (SessionRunScreen): at 80 columns another key
# there pushes "? Help" off the footer of every other run.
RATE = Binding(
    "e",
    "rate",
    "Rate",
    tooltip="Rate the highlighted agent's technical quality by hand: 0 to 1, or 1 to 5 stars",
    id="run.rate",
    show=False,
)


def _bar(value: float | None, width: int = 8) -> str:
    if value is None:
        return ""
    if not 0.0 <= value <= 1.0:  # no bar for a value out of range (NaN too): the number
        return f"{value:.2f}"
    filled = round(value * width)
    return "█" * filled + "░" * (width - filled) + f" {value:.2f}"


class RunScreen(RunKeys):
    """One run's agents side by side, the highlighted agent's detail, and the weights."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="run.back"),
        Binding(
            "p",
            "prefer",
            "Prefer",
            tooltip="Mark the highlighted agent as the one you preferred (again: clear it)",
            id="run.prefer",
        ),
        Binding(
            "n",
            "next_run",
            "Next",
            tooltip="Open the next run to mark (as n in the runs list picks them) in place"
            " of this one",
            id="run.next",
        ),
        Binding(
            "g",
            "toggle_scope",
            "Scope",
            tooltip="The weights the slider moves: global, or the run's stage table",
            id="run.scope",
        ),
        # Not in the footer: at 80 columns it makes room for n.
        Binding(
            "r",
            "reset",
            "Reset",
            tooltip="Reset the weights to config.toml's",
            show=False,
            id="run.reset",
        ),
        # The three weights walk together (the others follow to keep the rule).
        Binding("left_square_bracket", "weight(0, -1)", "Tech -0.05", show=False, key_display="["),
        Binding("right_square_bracket", "weight(0, 1)", "Tech +0.05", show=False, key_display="]"),
        Binding("left_parenthesis", "weight(1, -1)", "Proact -0.05", show=False, key_display="("),
        Binding("right_parenthesis", "weight(1, 1)", "Proact +0.05", show=False, key_display=")"),
        Binding("less_than_sign", "weight(2, -1)", "Pers -0.05", show=False, key_display="<"),
        Binding("greater_than_sign", "weight(2, 1)", "Pers +0.05", show=False, key_display=">"),
        Binding("m", "flip_map", "Map", tooltip="Who ranks first at every weight", id="run.map"),
        Binding(
            "h",
            "toggle_thinking",
            "Thinking",
            tooltip="Show or hide the agent's thinking in a session's conversation (it is"
            " not addressed to you)",
            show=False,  # in the footer of a run of sessions only (SessionRunScreen)
            id="run.thinking",
        ),
        RATE,
        Binding(
            "l",
            "cycle_lock",
            "Lock",
            tooltip="Hold one weight: none, technical, proactivity, personalization",
            id="run.lock",
        ),
        Binding(
            "u",
            "ungroup",
            "Ungroup",
            tooltip="Give each session of this run its own run again; asks first",
            show=False,
            id="run.ungroup",
        ),
    ]

    app: AppServices

    def __init__(self, run: Run) -> None:
        super().__init__()
        self.run = run
        self.ranking: Ranking | None = None
        self._scope: str | None = None  # the weights bar's: a stage's table, or global
        self._flash: dict[str, float] = {}
        self._covered_at: object = None  # the workspace's state when a screen covered this
        # A run of sessions opens on the conversation, in its own first tab.
        self._conversation = any(has_steps(agent) for agent in run.agents)
        self._before_map = "tab-turns" if self._conversation else "tab-questions"
        self._thinking = False  # thinking shown in the conversation
        self._shown_penalties: tuple[object, object] | None = None  # the detail's
        # Each agent's conversation as built, with thinking and without (a long session
        # takes a moment to build: moving the cursor back shows it at once).
        self._built: dict[tuple[str, bool], list[Line]] = {}
        # Whether the questions table has the asked and answer columns: some question of
        # the run was asked through a tool.
        self._answer_width = 0  # the cells the questions table's answers were cut to
        self._asked = any(
            q.asked_with is AskedWith.TOOL
            for agent in run.agents
            if agent.trajectory is not None
            for q in agent.trajectory.questions
        )

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="run-body"):
            yield Static(id="run-header")
            yield FittedTable(AGENT_COLUMNS, id="agents", cursor_type="row", zebra_stripes=True)
            yield Static(id="agent-facts")
            with TabbedContent(id="detail"):
                if self._conversation:
                    yield self._turns_pane("Conversation")
                # Only a run whose agents edited files has the tab (its files, their diffs).
                assert self.app.workspace is not None
                changes = changes_panel(self.app.workspace.store, self.run)
                if changes is not None:
                    yield TabPane("Changes", changes, id="tab-changes")
                with TabPane("Questions", id="tab-questions"):
                    yield DataTable(id="questions", cursor_type="row")
                with TabPane("Violations", id="tab-violations"):
                    yield FittedTable(VIOLATION_COLUMNS, id="violations", cursor_type="row")
                if not self._conversation:
                    yield self._turns_pane("Turns")
                with TabPane("Output", id="tab-output"):
                    yield VerticalScroll(Static(id="output"))
                with TabPane("Iterations", id="tab-iterations"):
                    yield Static(id="iterations")
                with TabPane("Flip map", id="tab-map"):
                    yield FlipMapPanel()
                if self.run.consensus is not None:
                    with TabPane("Consensus", id="tab-consensus"):
                        yield VerticalScroll(Static(consensus_text(self.run), id="consensus"))
        yield WeightsBar()
        yield Footer()

    @staticmethod
    def _turns_pane(title: str) -> TabPane:
        """The turns: a session agent's conversation, else each prompt and response."""
        return TabPane(
            title,
            Conversation(id="conversation"),
            VerticalScroll(Static(id="turns"), id="turns-box"),
            id="tab-turns",
        )

    def on_mount(self) -> None:
        workspace = self.app.workspace
        assert workspace is not None
        self._scope = workspace.scope_of(self.run.stage)
        asked = ("asked", "answer") if self._asked else ()
        self.query_one("#questions", DataTable).add_columns(
            "turn", "effort", "label", *asked, "question"
        )
        self._show_header()
        self._show_iterations()
        self.refresh_ranking()
        self.sync_weights()
        self.query_one("#agents").focus()

    # -- the run -----------------------------------------------------------------

    def _show_header(self) -> None:
        run = self.run
        facts = [
            f"stage {run.stage or '—'}",
            *([f"spec {run.spec_id}"] if run.spec_id else []),
            f"task type {task_type(run.task).value}",
            f"preferences {', '.join(run.preferences) or 'none'}",
        ]
        parts: list[Any] = [
            (literal(run.id, True), "bold"),
            " │ ",
            literal(" │ ".join(facts), True),
            "\n",
            self._task_lines(),
        ]
        summary = consensus_summary(run)
        if summary:
            parts += ["\n", ("consensus: ", "dim"), literal(summary, True)]
        header = Content.assemble(*parts)
        self.query_one("#run-header", Static).update(header)

    def _task_lines(self) -> Content:
        """ "task: " and the task, on at most TASK_LINES lines of the header (a session's
        task is its first prompt: a pasted log would push the agents off the screen)."""
        task = Content.assemble(("task: ", "dim"), literal(self.run.task or "—", True))
        width = self.size.width - 2  # the header's padding
        most = TASK_LINES if self.size.height >= TALL else 1
        if width <= 1 or task.cell_length <= width:
            return task
        lines = task.wrap(width)
        if len(lines) <= most:
            return task
        shown = lines[: most - 1]
        last = lines[most - 1]
        shown.append(last.truncate(width - 1) + "…" if last.cell_length >= width else last + "…")
        return Content("\n").join(shown)

    def on_resize(self) -> None:
        self._show_header()
        if self._asked and answer_width(self.size.width) != self._answer_width:
            self._show_questions(self._highlighted_agent())  # answers take the width there is

    def _show_iterations(self) -> None:
        widget = self.query_one("#iterations", Static)
        if not self.run.iterations:
            widget.update("No iteration series in this run.")
            return
        stop = analyse(self.run.iterations)
        series = ", ".join(f"{x:g}" for x in self.run.iterations)
        best = "—" if stop.best_score is None else f"{stop.best_score:g}"
        widget.update(
            Content(
                f"iterations: {series}\n"
                f"early stop: would stop after iteration {stop.stopped_at} of"
                f" {stop.iterations} ({stop.reason}), best {best} at iteration"
                f" {stop.best_iteration}; {stop.saved} iteration(s) saved"
            )
        )

    def refresh_ranking(self) -> None:
        """Re-rank under the current weights; flash agents whose rank changed."""
        workspace = self.app.workspace
        assert workspace is not None
        before = {a.name: a.rank for a in self.ranking.agents} if self.ranking else {}
        self.ranking = rank_run(self.run, workspace.settings)
        now = time.monotonic()
        for agent in self.ranking.agents:
            if agent.name in before and before[agent.name] != agent.rank:
                self._flash[agent.name] = now + 1.0
        preferred = self._preferred()
        # The highlight stays on its agent when the order changes (and so does the
        # detail below the table).
        self.query_one("#agents", FittedTable).show_rows(
            {
                agent.name: self._agent_cells(
                    agent, self._flash.get(agent.name, 0.0) > now, preferred
                )
                for agent in self.ranking.agents
            },
        )
        if any(t > now for t in self._flash.values()):
            self.set_timer(1.05, self._end_flash)

    def _agent_cells(
        self, agent: AgentScore, flashing: bool, preferred: str | None
    ) -> tuple[Any, ...]:
        """One row of the agents table."""
        flash = f"bold reverse {colour(self.app, CAUTION).hex}"
        if agent.name == preferred:
            mark = "★ selected" if agent.rank == 1 else "★ preferred"
        else:
            mark = "selected" if agent.rank == 1 else ""
        whole = self.run.agent(agent.name)
        waits = whole is not None and agent_waiting(whole)
        return (
            # A rank that just changed flashes by its colour alone: a wider cell would
            # widen the column for good.
            cell(str(agent.rank), flash if flashing else "bold"),
            cell(f"{WAITING} {agent.name}", "bold") if waits else cell(agent.name),
            # A space where a minus sign goes, so a negative final does not widen it.
            f"{agent.final: .3f}",
            # An unscored agent's technical is the ranking's placeholder, never shown.
            "—" if agent.unscored else f"{agent.technical:.3f}",
            number(agent.r_proact, signed=True),
            number(agent.r_pers, signed=True),
            number(agent.interaction, signed=True),
            mark,
            f"{agent.gap:.3f}",
            ", ".join(agent.flags),
            _bar(agent.weight),
        )

    def _end_flash(self) -> None:
        now = time.monotonic()
        if self._flash and all(t <= now for t in self._flash.values()):
            self._flash.clear()
            self.refresh_ranking()

    def _preferred(self) -> str | None:
        workspace = self.app.workspace
        assert workspace is not None
        i = workspace.index.get(self.run.id)
        return workspace.infos[i].preferred if i is not None else self.run.preferred_agent

    def _highlighted_name(self) -> str | None:
        return cursor_key(self.query_one("#agents", DataTable))

    def _highlighted_agent(self) -> Agent | None:
        name = self._highlighted_name()
        return self.run.agent(name) if name else None

    @on(DataTable.RowHighlighted, "#agents")
    def _agent_highlighted(self) -> None:
        self._show_agent()

    def _penalties(self) -> tuple[object, object]:
        """What the violations tab's penalties are computed from."""
        workspace = self.app.workspace
        assert workspace is not None
        return workspace.settings.penalties, workspace.settings.personalization

    def _show_agent(self, keep_turn: bool = False) -> None:
        agent = self._highlighted_agent()
        self._shown_penalties = self._penalties()
        self._show_facts(agent)
        self._show_questions(agent)
        violations = self.query_one("#violations", FittedTable)
        violations.show_rows({})
        turns = self.query_one("#turns", Static)
        output = self.query_one("#output", Static)
        output.update(plain(agent.output if agent and agent.output else "No output stored."))
        self._show_conversation(agent, keep_turn)
        if agent is None or agent.trajectory is None:
            turns.update("No trajectory: the technical-only fallback applies to this agent.")
            return
        trajectory = agent.trajectory
        workspace = self.app.workspace
        assert workspace is not None
        rows = [
            (
                "—" if v.turn is None else str(v.turn),
                cell(v.preference),
                v.severity.value,
                f"{violation_penalty(v, workspace.settings):.3f}",
                v.source.value,
            )
            for v in trajectory.violations
        ]
        if trajectory.unchecked:
            rows.append(
                ("—", cell(", ".join(trajectory.unchecked)), "unchecked", "—", "no rule checker")
            )
        violations.show_rows({str(i): row for i, row in enumerate(rows)})
        if not trajectory.turns or has_steps(agent):
            turns.update("No turns recorded." if not trajectory.turns else "")
            return
        parts: list[Content | str] = []
        for turn_number, turn in enumerate(trajectory.turns, start=1):
            facts = [
                f"{turn.token_count} tokens" if turn.token_count is not None else "",
                f"{turn.latency_ms} ms" if turn.latency_ms is not None else "",
                literal(turn.timestamp, True),
            ]
            heading = f"turn {turn_number}  " + "  ".join(f for f in facts if f)
            parts += [Content.styled(heading, "bold"), "\n"]
            if turn.prompt:
                parts += [Content.styled("prompt: ", "dim"), literal(turn.prompt), "\n"]
            parts += [Content.styled("response: ", "dim"), literal(turn.response), "\n\n"]
        turns.update(Content.assemble(*parts))

    def _show_questions(self, agent: Agent | None) -> None:
        questions = self.query_one("#questions", DataTable)
        questions.clear()
        if agent is not None and agent.trajectory is not None:
            self._answer_width = answer_width(self.size.width)
            for q in agent.trajectory.questions:
                questions.add_row(*question_cells(q, self._asked, self._answer_width))

    def _show_facts(self, agent: Agent | None) -> None:
        """The line above the tabs: a session agent's technical source, models and
        sessions (other runs' agents have none of these: no line)."""
        facts = self.query_one("#agent-facts", Static)
        shown = agent is not None and bool(
            agent.technical_source is not None or agent.models or agent.sessions
        )
        facts.display = shown
        if agent is not None and shown:
            facts.update(Content(agent_facts(agent)))

    def _show_conversation(self, agent: Agent | None, keep_turn: bool = False) -> None:
        """A session agent's turns as the user lived them; other agents' turns as each
        prompt and response."""
        conversation = self.query_one("#conversation", Conversation)
        steps = has_steps(agent)
        conversation.display = steps
        self.query_one("#turns-box").display = not steps
        if agent is None or agent.trajectory is None or not steps:
            conversation.show([])
            return
        key = (agent.name, self._thinking)
        if key not in self._built:
            self._built[key] = conversation_lines(agent.trajectory, self._thinking)
        conversation.show(self._built[key], keep_turn)

    def replace_run(self, run: Run) -> None:
        """The run as the database holds it now (after a rating): same agent, same turn."""
        self.run = run
        self._built.clear()
        self._show_header()
        self.refresh_ranking()
        self._show_agent(keep_turn=True)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Only a run with a stage has a stage table to edit: elsewhere the key is not
        # offered (nor in the footer).
        if action == "toggle_scope":
            return self.run.stage is not None
        return True

    def action_toggle_thinking(self) -> None:
        agent = self._highlighted_agent()
        if not has_steps(agent):
            which = "for this agent" if self._conversation else "in this run"
            self.notify(f"No conversation {which}: only a session's turns hold thinking.")
            return
        if not has_thinking(agent):
            assert agent is not None
            name = literal(agent.name, True)
            self.notify(f"No thinking in {name}'s turns: its tool recorded none.", markup=False)
            return
        self._thinking = not self._thinking
        self._show_conversation(agent, keep_turn=True)
        self.query_one("#detail", TabbedContent).active = "tab-turns"
        self.notify(f"Thinking {'shown' if self._thinking else 'hidden'}", timeout=2)

    def action_rate(self) -> None:
        """Ask for the highlighted agent's technical score, and store it."""
        agent = self._highlighted_agent()
        if agent is None:
            return
        run_id, name = self.run.id, agent.name

        def rated(value: float | None) -> None:
            if value is not None:
                self.post_message(TechnicalRated(run_id, name, value))

        self.app.push_screen(RateScreen(name, technical_text(agent)), rated)

    # -- weights -----------------------------------------------------------------

    @property
    def scope(self) -> str | None:
        return self._scope

    def shown_run_ids(self) -> list[str] | None:
        return [self.run.id]

    def workspace_changed(self) -> None:
        self.refresh_ranking()
        self.sync_weights()
        if self._penalties() != self._shown_penalties:  # e.g. the Paper preset's
            self._show_agent(keep_turn=True)

    def on_screen_suspend(self) -> None:
        workspace = self.app.workspace
        self._covered_at = workspace.state() if workspace is not None else None

    def on_screen_resume(self) -> None:
        # A screen opened from here (the tuning panel's "use optimal", the dashboard's
        # marks) may have changed the weights or marks.
        workspace = self.app.workspace
        covered_at = self._covered_at
        if workspace is not None and covered_at is not None and workspace.state() != covered_at:
            self.workspace_changed()

    def sync_weights(self) -> None:
        workspace = self.app.workspace
        assert workspace is not None
        bar = self.query_one(WeightsBar)
        bar.show(self.three_weights(), self.scope, workspace.dirty)
        if self.ranking is not None:  # unchanged by a weight step: no repaint then
            bar.show_flips(flips(self.ranking.agents, workspace.settings))
        bar.show_figures(workspace.figures())
        self._show_map()

    # -- the three weights ---------------------------------------------------------

    def three_weights(self) -> Triple:
        """(technical, proactivity, personalization) of the scope being edited."""
        workspace = self.app.workspace
        assert workspace is not None
        weights = workspace.weights_for(self.scope)
        return weights.technical, weights.proactivity, weights.personalization

    @on(WeightSliders.Changed)
    def _sliders_moved(self, event: WeightSliders.Changed) -> None:
        event.stop()
        weights = Weights(*event.weights)
        self.post_message(WeightsChanged(weights, self.scope, time.perf_counter()))

    def _show_map(self) -> None:
        """The flip map: the regions (they change with the scores, not the weights) and
        the current weights on it."""
        workspace = self.app.workspace
        assert workspace is not None and self.ranking is not None
        _, proactivity, personalization = self.three_weights()
        self.query_one(FlipMapPanel).show(
            regions(self.ranking.agents, workspace.settings),
            (proactivity, personalization),
            self.ranking.best_agent,
        )

    @on(FlipMap.Picked)
    def _map_picked(self, event: FlipMap.Picked) -> None:
        event.stop()
        self.query_one(WeightsBar).sliders.place(event.proactivity, event.personalization)

    def action_flip_map(self) -> None:
        """Show the flip map, or go back to the tab shown before it."""
        tabs = self.query_one("#detail", TabbedContent)
        if tabs.active == "tab-map":
            tabs.active = self._before_map
        else:
            self._before_map = tabs.active
            tabs.active = "tab-map"

    def action_weight(self, k: int, direction: int) -> None:
        """Step one weight by 0.05; the others walk."""
        self.query_one(WeightsBar).sliders.step(k, direction * 0.05)

    def action_cycle_lock(self) -> None:
        bar = self.query_one(WeightsBar)
        self.notify(bar.sliders.cycle_lock().capitalize(), timeout=2)
        bar.show_lock()

    def action_toggle_scope(self) -> None:
        """Edit the global pair, or this run's stage's own table."""
        if self.run.stage is None:
            return  # not offered (check_action): only the global weights apply
        if self.scope is None:
            # Switching is no change: a stage without its own table gets one only when
            # its weight is moved (starting from the weights the run has now).
            self._scope = self.run.stage
        else:
            self._scope = None
        self.sync_weights()

    def action_reset(self) -> None:
        self.post_message(WeightsReset())

    def action_prefer(self) -> None:
        name = self._highlighted_name()
        if name is None:
            return
        self.post_message(MarkChanged(self.run.id, None if name == self._preferred() else name))

    def action_ungroup(self) -> None:
        """Ask, then give each session of this run its own run."""
        from .regroup import UngroupScreen

        run = self.run
        if not any(agent.sessions for agent in run.agents):
            self.notify("Only a run read from sessions can be ungrouped.", severity="warning")
        elif len(run.agents) < 2:
            self.notify("This run holds one session: there is nothing to ungroup.")
        else:

            def decided(yes: bool | None) -> None:
                if yes:
                    self.post_message(UngroupRun(run.id))

            self.app.push_screen(UngroupScreen(run), decided)


class SessionRunScreen(RunScreen):
    """A run of imported sessions: its agents are often unscored, so rating by hand is
    offered in the footer too; at 80 columns the map and lock make room for it and the
    thinking key there (they stay in the help and work as everywhere)."""

    BINDINGS = [
        replace(RATE, show=True),
        *(
            replace(binding, show=True)
            for binding in RunScreen.BINDINGS
            if isinstance(binding, Binding) and binding.id == "run.thinking"
        ),
        *(
            replace(binding, show=False)
            for binding in RunScreen.BINDINGS
            if isinstance(binding, Binding) and binding.id in ("run.map", "run.lock")
        ),
    ]


def run_screen(run: Run) -> RunScreen:
    """The screen a run opens in."""
    sessions = any(agent.sessions or has_steps(agent) for agent in run.agents)
    return SessionRunScreen(run) if sessions else RunScreen(run)
