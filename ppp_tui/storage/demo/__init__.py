"""A realistic, deterministic demo data set: raw runs in the import format.

`generate(runs, seed)` yields run objects exactly as `ppp-tui import` reads them. The
same (runs, seed) pair always gives the same runs: everything is drawn from one
`random.Random(seed)`, nothing depends on the clock or on hash randomisation.

What is in it:

- seven agents named like real coding agents, each with its own character: claude-code
  is technically strong but asks many high-effort questions; codex is concise and
  follows the user's preferences; gemini-cli asks quick selection questions and often
  breaks format preferences; aider's trajectories are chat transcripts (questions
  extracted from its turns); copilot often has no trajectory at all; and so on;
- specs (SPEC-KIT-001...) that move through plan, tasks, implement, validate, audit and
  unlock, plus a few ad-hoc runs with no stage;
- task texts of every task type of `core.relevance`, some stating values (a rate limit,
  a port, a Python version) that answer a question an agent then asks anyway;
- questions of every effort: labelled, unlabelled (the classifier decides) and only in
  turn responses (extraction decides); stated preferences from the paper's catalogue
  with explicit violations of several severities, or left to the rule checkers;
- relevance and confidence per agent, and iterative-refinement quality series that
  improve, plateau or regress;
- `selected_agent`, the pick of `rank_run` under the default 70/30 weights, and on about
  40% of the runs a `preferred_agent` chosen by a simulated user whose hidden weights
  (technical 0.62 overall, a little different per stage, see `HIDDEN_WEIGHTS`) and a
  little noise decide. Both come from the real core: each run is scored with the
  functions `rank_run` uses, and the user's score of each agent is the core's
  `final_score` under `hidden_settings()`, so tuning has something real to find.

`generate_parsed` yields each run with the `Run` that `run_from_dict` makes of it (built
beside the raw object, not parsed back from it), and `write_demo` writes a demo database
(`ppp-tui demo`) from those without parsing anything.

The runs come in chunks of `CHUNK` (2,000: the default demo is one), each drawn from a
random stream of its own with specs of its own, so a large demo is made by several
processes at once (on Linux) and is still the same for the same (runs, seed).

The package: `profiles` (the agents and the simulated user), `tables` (the texts runs
are drawn from), `draw` (random draws and run times), `questions` (questions and
violations), `generator` (specs, agents, runs) and `writer` (the demo database).
"""

from __future__ import annotations

from .generator import CHUNK, DEMO_SIZE, GENERATOR_VERSION, generate, generate_parsed
from .profiles import (
    HIDDEN_TECHNICAL,
    HIDDEN_WEIGHTS,
    PREFERRED_SHARE,
    PROFILES,
    USER_NOISE,
    hidden_settings,
)
from .sessions import SESSION_RUNS
from .writer import write_demo

__all__ = [
    "CHUNK",
    "DEMO_SIZE",
    "GENERATOR_VERSION",
    "HIDDEN_TECHNICAL",
    "HIDDEN_WEIGHTS",
    "PREFERRED_SHARE",
    "PROFILES",
    "SESSION_RUNS",
    "USER_NOISE",
    "generate",
    "generate_parsed",
    "hidden_settings",
    "write_demo",
]
