"""The demo runs: specs moving through the stages, agents with their trajectories,
and each run with the two picks, the system's and the simulated user's.

Each run is made as the `Run` that `run_from_dict` would read, and, when asked for, as
the raw object `ppp-tui import` reads, from the same draws, so nothing is parsed back (the
demo database needs only the `Run`s: `_chunk_models`). The runs come in
chunks of `CHUNK`, each from a random stream of its own, so chunks can be made in any
process and the demo is still the same for the same (runs, seed).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from operator import itemgetter
from typing import Any

from ...core.effort import classify_effort
from ...core.model import (
    Agent,
    Effort,
    Question,
    Run,
    Severity,
    Source,
    Trajectory,
    Turn,
    Violation,
)
from ...core.preferences import AskedQuestion, check_questions
from ...core.relevance import TaskType
from ...core.runs.checked import questions_of_turns
from ...core.runs.makers import (
    new_agent,
    new_question,
    new_run,
    new_trajectory,
    new_turn,
    new_violation,
)
from ...core.scoring import (
    final_score,
    rank_key,
    rewards,
    violation_penalty,
)
from ...core.settings import STAGES, Settings
from .draw import _START_NAIVE, _choice, _clip, _fill, _iso, _pick, _randint, _timestamps
from .profiles import (
    _AGENT_COUNT_CUM,
    _AGENT_COUNTS,
    _PROFILE_CUM,
    _PROFILE_INDEXES,
    PREFERRED_SHARE,
    PROFILES,
    USER_NOISE,
    _Profile,
    hidden_settings,
)
from .questions import _Context, _Question, _questions, _violations
from .tables import (
    _CLOSINGS,
    _CONFLICTS,
    _DETAILS,
    _LEADS,
    _NUDGES,
    _OUTPUTS,
    _PREFERENCE_CUM,
    _PREFERENCES,
    _PROGRESS,
    _REPLIES,
    _STAGE_CUM,
    _STAGE_RUNS,
    _STAGE_TECH,
    _TASK_TYPES,
    _TASKS,
    _V,
)

DEMO_SIZE = 2000

# Runs per independently seeded chunk (the default demo is one chunk).
CHUNK = 2000
_SPECS_PER_CHUNK = 1000

# Raised whenever the same (runs, seed) would give different runs: a demo database kept
# between sessions by an older generator is then made again.
GENERATOR_VERSION = 6

_DEFAULT_SETTINGS = Settings()


# --- Specs -----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Spec:
    number: int
    values: dict[str, str]  # slot values shared by the spec's runs
    preferences: list[str]
    stage: int = 0
    left: int = 1


def _preferences(rng: random.Random) -> list[str]:
    """A user's stated preferences: none, no_preference, or one to three compatible ones."""
    u = rng.random()
    if u < 0.3:
        return []
    if u < 0.36:
        return ["no_preference"]
    count = 1 if u < 0.7 else 2 if u < 0.9 else 3
    chosen: list[str] = []
    names = [name for name, _ in _PREFERENCES]
    for _ in range(count * 4):
        if len(chosen) == count:
            break
        name = _pick(rng, names, _PREFERENCE_CUM)
        if name in chosen or any(name in g and g.intersection(chosen) for g in _CONFLICTS):
            continue
        chosen.append(name)
    return ["no_commas" if p == "commas" and rng.random() < 0.25 else p for p in chosen]


# Slot values a spec fixes for all its runs.
_SPEC_SLOTS = ("component", "feature", "file", "func", "records")


def _new_spec(rng: random.Random, number: int) -> _Spec:
    values = {slot: _choice(rng, _V[slot]) for slot in _SPEC_SLOTS}
    spec = _Spec(number, values, _preferences(rng))
    spec.left = _randint(rng, *_STAGE_RUNS[STAGES[0]])
    return spec


# --- Agents' trajectories --------------------------------------------------------------------


def _turns(
    rng: random.Random, ctx: _Context, questions: list[_Question], start: datetime, closing: bool
) -> tuple[Turn, ...]:
    last = max((q.turn for q in questions), default=0)
    count = max(1, last + (1 if closing or last == 0 else 0))
    turns = []
    moment = start
    previous_asked = False
    for number in range(1, count + 1):
        asked = [q.text for q in questions if q.turn == number]
        if asked:
            lead = _fill(rng, _choice(rng, _LEADS), ctx.values)
            response = " ".join([lead, *asked])
        elif number < count:
            response = _fill(rng, _choice(rng, _PROGRESS), ctx.values)
        else:
            response = _fill(rng, _choice(rng, _CLOSINGS), ctx.values)
        if number == 1:
            prompt = ctx.task
        elif previous_asked:
            prompt = _choice(rng, _REPLIES)
        else:
            prompt = _choice(rng, _NUDGES)
        previous_asked = bool(asked)
        latency = _randint(rng, 900, 40000)
        moment += timedelta(milliseconds=latency + _randint(rng, 2000, 90000))
        turns.append(new_turn(prompt, response, _randint(rng, 150, 3200), latency, _iso(moment)))
    return tuple(turns)


def _raw_turns(turns: tuple[Turn, ...]) -> list[dict[str, Any]]:
    """Turns as the import format writes them."""
    return [
        {
            "prompt": t.prompt,
            "response": t.response,
            "token_count": t.token_count,
            "latency_ms": t.latency_ms,
            "timestamp": t.timestamp,
        }
        for t in turns
    ]


def _raw_questions(questions: tuple[Question, ...]) -> list[dict[str, Any]]:
    """Listed questions as the import format writes them: an effort only where it was
    labelled, a turn only where it was recorded."""
    items = []
    for q in questions:
        item: dict[str, Any] = {"text": q.text}
        if q.source is Source.LABEL:
            item["effort"] = q.effort.value
        if q.turn is not None:
            item["turn"] = q.turn
        items.append(item)
    return items


def _checked(
    ctx: _Context, questions: tuple[Question, ...]
) -> tuple[tuple[Violation, ...], tuple[str, ...]]:
    """The violations and unchecked preferences of a trajectory without listed
    violations: the rule checkers decide, as on import."""
    if not ctx.prefs.states:
        return (), ()
    result = check_questions(ctx.prefs.names, [AskedQuestion(q.text, q.turn) for q in questions])
    violations = tuple(
        new_violation(v.preference, Severity.ERROR, None, v.turn, Source.CHECKER)
        for v in result.violations
    )
    return violations, result.unchecked


def _violation_models(violations: list[dict[str, Any]]) -> tuple[Violation, ...]:
    return tuple(
        new_violation(
            v["preference"],
            _SEVERITY_OF[v.get("severity", "error")],
            v.get("penalty"),
            v.get("turn"),
            Source.LABEL,
        )
        for v in violations
    )


_SEVERITY_OF = {severity.value: severity for severity in Severity}
_EFFORT_OF = {effort.value: effort for effort in Effort}


def _trajectory(
    rng: random.Random, profile: _Profile, ctx: _Context, start: datetime, raw: bool
) -> tuple[dict[str, Any] | None, Trajectory | None]:
    """The trajectory `run_from_dict` reads, and the raw one it reads it from (built
    only if `raw`, else an empty dict); both None for an agent without one."""
    u = rng.random()
    if u < profile.no_trajectory:
        return None, None
    if u < profile.no_trajectory + profile.empty_trajectory:
        return {}, new_trajectory((), (), *_checked(ctx, ()))
    comply = {p for p in ctx.prefs.canonical if rng.random() < profile.comply}
    questions = _questions(rng, profile, ctx, comply)
    labelled, unlabelled, _ = profile.modes
    m = rng.random() * sum(profile.modes)
    trajectory: dict[str, Any] = {}
    task = ctx.task
    turns: tuple[Turn, ...] = ()
    if m < labelled + unlabelled:
        if rng.random() < profile.verbose:
            turns = _turns(rng, ctx, questions, start, True)
            if raw:
                trajectory["turns"] = _raw_turns(turns)
        share = 1.0 if m < labelled else profile.label_share
        asked = []
        for q in questions:
            labelled_effort = rng.random() < share
            turn = q.turn if rng.random() < 0.95 else None
            if labelled_effort:
                asked.append(new_question(q.text, _EFFORT_OF[q.effort], turn, Source.LABEL))
            else:
                effort = classify_effort(q.text, task)
                asked.append(new_question(q.text, effort, turn, Source.CLASSIFIER))
        parsed_questions = tuple(asked)
        if raw:
            trajectory["questions"] = _raw_questions(parsed_questions)
        checked = m >= labelled and rng.random() < profile.checked
    else:
        # A chat transcript: the questions are only in the responses (extraction runs).
        turns = _turns(rng, ctx, questions, start, rng.random() < 0.5)
        if raw:
            trajectory["turns"] = _raw_turns(turns)
        parsed_questions = questions_of_turns(turns, task)
        checked = rng.random() < max(profile.checked, 0.6)
    if not (checked and ctx.prefs.has_stated):
        raw_violations = _violations(rng, ctx, questions, comply)
        if raw:
            trajectory["violations"] = raw_violations
        violations = _violation_models(raw_violations)
        return trajectory, new_trajectory(turns, parsed_questions, violations, ())
    return trajectory, new_trajectory(turns, parsed_questions, *_checked(ctx, parsed_questions))


def _output(rng: random.Random, ctx: _Context) -> str:
    bank = _OUTPUTS[ctx.task_type]
    return _fill(rng, _choice(rng, bank), ctx.values)


def _agents(
    rng: random.Random, ctx: _Context, start: datetime, raw: bool
) -> tuple[list[dict[str, Any]], list[Agent]]:
    """The agents `run_from_dict` reads, and the raw ones it reads them from (none
    unless `raw`)."""
    count = _pick(rng, _AGENT_COUNTS, _AGENT_COUNT_CUM)
    picked: list[int] = []
    while len(picked) < count:
        index = _pick(rng, _PROFILE_INDEXES, _PROFILE_CUM)
        if index not in picked:
            picked.append(index)
    chosen = [PROFILES[index] for index in picked]
    difficulty = rng.gauss(0.0, 0.05)
    agents = []
    models = []
    task_type = ctx.task_type
    base = _STAGE_TECH[ctx.stage] + difficulty
    gauss = rng.gauss
    for profile in chosen:
        relevance = _clip(profile.relevance[task_type] + gauss(0.0, 0.06), 0.15, 1.0)
        technical = (
            base
            + profile.technical
            + profile.strengths[task_type]
            + gauss(0.0, profile.spread)
            - 0.15 * max(0.0, 0.6 - relevance)
        )
        model = _choice(rng, profile.models)
        technical = round(_clip(technical, 0.05, 1.0), 3)
        relevance = round(relevance, 2)
        confidence = round(_clip(profile.confidence + gauss(0.0, 0.07), 0.3, 1.0), 2)
        output = _output(rng, ctx)
        trajectory, parsed = _trajectory(rng, profile, ctx, start, raw)
        if raw:
            agent: dict[str, Any] = {
                "name": profile.name,
                "model": model,
                "technical_score": technical,
                "relevance": relevance,
                "confidence": confidence,
                "output": output,
            }
            if trajectory is not None:
                agent["trajectory"] = trajectory
            agents.append(agent)
        models.append(
            new_agent(profile.name, technical, parsed, model, relevance, confidence, output)
        )
    return agents, models


def _iterations(rng: random.Random) -> list[float]:
    """Quality scores of a refinement loop: improving, plateauing, regressing or noisy."""
    count = _randint(rng, 3, 8)
    score = rng.uniform(6.0, 8.2)
    shape = rng.random()
    series = []
    for i in range(count):
        series.append(round(_clip(score, 0.0, 10.0), 1))
        if shape < 0.35:  # improving
            score += rng.uniform(0.15, 0.6)
        elif shape < 0.7:  # improves, then plateaus
            score += rng.uniform(0.2, 0.6) if i < 2 else rng.uniform(-0.05, 0.08)
        elif shape < 0.9:  # improves, then regresses
            score += rng.uniform(0.1, 0.5) if i < count // 2 else -rng.uniform(0.2, 0.8)
        else:  # noisy
            score += rng.uniform(-0.3, 0.35)
    return series


# --- Runs ------------------------------------------------------------------------------------


def _task(rng: random.Random, task_type: str, values: dict[str, str]) -> tuple[str, str | None]:
    bank = _TASKS[task_type]
    text = _fill(rng, _choice(rng, bank), values)
    if task_type == TaskType.CODE_GENERATION.value and rng.random() < 0.55:
        clause, choices, question = _choice(rng, _DETAILS)
        return text + clause.format(v=_choice(rng, choices)), question
    return text, None


class _Generator:
    """The runs of one chunk (`CHUNK` runs in a row): its own random stream and specs.

    Chunks do not depend on each other, so they can be made in any order or process
    and still give the same runs; the first chunk's stream is `random.Random(seed)`.
    """

    def __init__(self, seed: int, times: Sequence[float], chunk: int = 0) -> None:
        self.rng = random.Random(seed if chunk == 0 else f"{seed}:chunk:{chunk}")
        self.times = times
        self.hidden = hidden_settings()
        self.hidden_weights = {stage: self.hidden.weights_for(stage) for stage in (*STAGES, None)}
        self.default_weights = {
            stage: _DEFAULT_SETTINGS.weights_for(stage) for stage in (*STAGES, None)
        }
        self.specs: list[_Spec] = []
        # A chunk opens at most 10 + CHUNK / 6 specs (each takes >= 6 runs to finish).
        self.next_spec = chunk * _SPECS_PER_CHUNK + 1

    def _spec(self) -> _Spec:
        rng = self.rng
        while len(self.specs) < 10:
            self.specs.append(_new_spec(rng, self.next_spec))
            self.next_spec += 1
        spec: _Spec = _choice(rng, self.specs)
        return spec

    def _advance(self, spec: _Spec) -> None:
        spec.left -= 1
        if spec.left > 0:
            return
        spec.stage += 1
        if spec.stage < len(STAGES):
            spec.left = _randint(self.rng, *_STAGE_RUNS[STAGES[spec.stage]])
        else:
            self.specs.remove(spec)

    def _rank(self, agents: list[Agent], ctx: _Context) -> list[tuple[str, float, float | None]]:
        """(name, technical, interaction) of each agent in `rank_run`'s order under the
        default settings: its scores, worked out from the same core functions, without
        the rest of a `Ranking`."""
        settings = _DEFAULT_SETTINGS
        weights = self.default_weights[ctx.stage]
        keyed = []
        for agent in agents:
            trajectory = agent.trajectory
            interaction = None
            if trajectory is not None:
                violations = trajectory.violations
                # (Without violations the penalty sum is not used.)
                penalty = (
                    sum(violation_penalty(v, settings) for v in violations) if violations else 0
                )
                proact, pers = rewards(
                    trajectory.effort_counts(),
                    penalty,
                    bool(violations),
                    ctx.prefs.states,
                    settings,
                )
                interaction = proact + pers
            final = final_score(agent.technical, interaction, weights, settings)
            keyed.append(
                (
                    rank_key(final, agent.technical, agent.name),
                    (agent.name, agent.technical, interaction),
                )
            )
        keyed.sort(key=itemgetter(0))
        return [scores for _, scores in keyed]

    def _prefer(self, scores: list[tuple[str, float, float | None]], stage: str | None) -> str:
        """The simulated user's pick: the best under the hidden weights, plus a little noise.

        Each agent's hidden score is `final_score` under the hidden settings: exactly what
        `rank_run(run, hidden_settings())` computes (interaction does not depend on the
        weights), without scoring the run a second time.
        """
        weights = self.hidden_weights[stage]
        best, preferred = -float("inf"), scores[0][0]
        for name, technical, interaction in scores:
            hidden = final_score(technical, interaction, weights, self.hidden)
            noisy = hidden + self.rng.gauss(0.0, USER_NOISE)
            if noisy > best:
                best, preferred = noisy, name
        return preferred

    def run(self, index: int) -> tuple[dict[str, Any], Run]:
        """Run number `index`: the raw object and the `Run` that `run_from_dict` reads."""
        run, agents = self._make(index, raw=True)
        return _raw_run(run, agents), run

    def model(self, index: int) -> Run:
        """Just the `Run` of run number `index`: the same draws as `run` makes, without
        the raw object (which the demo database does not need)."""
        return self._make(index, raw=False)[0]

    def _make(self, index: int, raw: bool) -> tuple[Run, list[dict[str, Any]]]:
        """The run's `Run`, and its raw agents if `raw`."""
        rng = self.rng
        created = _START_NAIVE + timedelta(seconds=self.times[index])
        spec = self._spec()
        spec_id: str | None = f"SPEC-KIT-{spec.number:03d}"
        stage: str | None = None
        if rng.random() < 0.03:
            # An ad-hoc run outside the spec-kit pipeline: no stage, often no spec.
            preferences = _preferences(rng)
            values = {slot: _choice(rng, _V[slot]) for slot in _SPEC_SLOTS}
            if rng.random() < 0.5:
                spec_id = None
        else:
            stage = STAGES[spec.stage]
            preferences = list(spec.preferences)
            if rng.random() < 0.1:
                preferences = _preferences(rng)
            values = dict(spec.values)
        task_type = _pick(rng, _TASK_TYPES, _STAGE_CUM[stage])
        task, detail_question = _task(rng, task_type, values)
        ctx = _Context(
            task=task,
            task_type=task_type,
            detail_question=detail_question,
            values=values,
            stage=stage,
            preferences=preferences,
        )
        iterations: list[float] = []
        if rng.random() < 0.6:
            iterations = _iterations(rng)
        raw_agents, agents = _agents(rng, ctx, created, raw)
        if stage is not None:
            self._advance(spec)

        # The system's pick and the simulated user's, both scored by the core (what
        # `rank_run` does with the run `run_from_dict` reads).
        ranking = self._rank(agents, ctx)
        selected = ranking[0][0]
        preferred = None
        if rng.random() < PREFERRED_SHARE:
            preferred = self._prefer(ranking, stage)
        run = new_run(
            f"demo-{index + 1:06d}",
            tuple(agents),
            spec_id,
            stage,
            task,
            _iso(created),
            ctx.prefs.names,
            selected,
            preferred,
            tuple(iterations),
        )
        return run, raw_agents


def _raw_run(run: Run, agents: list[dict[str, Any]]) -> dict[str, Any]:
    """The raw object of a demo run, in the import format's key order (`agents`: its
    raw agents)."""
    obj: dict[str, Any] = {"id": run.id}
    if run.spec_id is not None:
        obj["spec_id"] = run.spec_id
    if run.stage is not None:
        obj["stage"] = run.stage
    obj["task"] = run.task
    obj["created_at"] = run.created_at
    if run.preferences:
        obj["preferences"] = list(run.preferences)
    obj["selected_agent"] = run.selected_agent
    if run.preferred_agent is not None:
        obj["preferred_agent"] = run.preferred_agent
    # A run's iterations, when drawn, are never an empty list.
    if run.iterations:
        obj["iterations"] = list(run.iterations)
    obj["agents"] = agents
    return obj


def generate_parsed(runs: int = DEMO_SIZE, seed: int = 0) -> Iterator[tuple[dict[str, Any], Run]]:
    """Like `generate`, with each raw run paired with `run_from_dict` of it.

    The generator builds every run's `Run` anyway (to score it), beside the raw object,
    so a caller that needs them too (the demo database) parses nothing.
    """
    if runs < 0:
        raise ValueError(f"runs must be >= 0, got {runs}")
    times = _timestamps(random.Random(f"{seed}:time"), runs)
    for chunk in range(_chunks(runs)):
        yield from _chunk_runs(seed, times, chunk)


def _chunks(runs: int) -> int:
    return -(-runs // CHUNK)


def _chunk_runs(
    seed: int, times: Sequence[float], chunk: int
) -> Iterator[tuple[dict[str, Any], Run]]:
    """The runs of chunk number `chunk` (`times` holds every run's time)."""
    generator = _Generator(seed, times, chunk)
    for index in range(chunk * CHUNK, min(len(times), (chunk + 1) * CHUNK)):
        yield generator.run(index)


def _chunk_models(seed: int, times: Sequence[float], chunk: int) -> Iterator[Run]:
    """The `Run`s of chunk number `chunk`, without their raw objects: the same runs as
    `_chunk_runs` gives, made faster."""
    generator = _Generator(seed, times, chunk)
    for index in range(chunk * CHUNK, min(len(times), (chunk + 1) * CHUNK)):
        yield generator.model(index)


def generate(runs: int = DEMO_SIZE, seed: int = 0) -> Iterator[dict[str, Any]]:
    """Yield `runs` demo runs in the import format, in time order.

    Deterministic for a (runs, seed) pair; every object is JSON-serialisable and reads
    back with `run_from_dict`. Raises ValueError for a negative count.
    """
    for raw, _ in generate_parsed(runs, seed):
        yield raw
