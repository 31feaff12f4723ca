"""Synthetic marked runs for the benchmarks: deterministic, realistic score ranges."""

from __future__ import annotations

import numpy as np

from ppp_tui.core.arrays import AgentRow, ScoreArrays

AGENTS = ("claude-code", "codex", "gemini-cli", "aider", "cursor")


def marked_runs(count: int, agents: int = 5, seed: int = 7) -> ScoreArrays:
    """`count` runs of `agents` agents, every run marked by a user with hidden weight 0.8."""
    rng = np.random.default_rng(seed)
    technical = rng.uniform(0.5, 1.0, (count, agents)).round(3)
    interaction = rng.choice([0.1, 0.05, 0.0, -0.05, -0.1, -0.45, -0.5, -1.0], (count, agents))
    no_trajectory = rng.random((count, agents)) < 0.05
    hidden = 0.8 * technical + 0.2 * interaction + rng.normal(0, 0.03, (count, agents))
    preferred = hidden.argmax(axis=1)
    rows = []
    for r in range(count):
        row = [
            AgentRow(
                AGENTS[j],
                float(technical[r, j]),
                None if no_trajectory[r, j] else float(interaction[r, j]),
            )
            for j in range(agents)
        ]
        rows.append((f"run-{r:06d}", "implement", row, AGENTS[preferred[r]]))
    return ScoreArrays.build(rows)
