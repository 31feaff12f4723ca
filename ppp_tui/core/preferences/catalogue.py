"""The PPP paper's user preferences: the catalogue of the 20 names, each one's category,
description and penalties, and the names' aliases.

In the paper (arXiv:2511.02208) a user preference constrains the questions the agent asks
the user, not its final answer. Each preference has a default penalty per violation by its
category (language 0.10; format, content and question style 0.05; none 0) and the paper's
own value for the `paper` preset.

The paper's public code (sunnweiwei/PPP-Agent, `envs/userville.py`, `REWARD_FUNCTIONS`) has
two kinds of preference:

- judged ones: the simulated user tags each `ask_question` call `[Reward 0]` when it breaks
  the preference, and each such call costs 0.1 or 0.5. Their wording lives in the paper's
  data set, not its code, so each description here states the plausible reading that the
  checkers (`checkers`) apply.
- coded ones, computed from the whole trajectory: no_ask, only_begin, ask_many and
  answer_more, each costing 1 per violation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

Category = Literal["language", "format", "content", "question_style", "none"]


@dataclass(frozen=True)
class Preference:
    """One user preference: what it asks of the agent's questions and what breaking it costs."""

    name: str
    category: Category
    default_penalty: float
    paper_penalty: float
    description: str


# The default penalty per violation, by category.
_DEFAULT_PENALTY: Mapping[Category, float] = MappingProxyType(
    {"language": 0.10, "format": 0.05, "content": 0.05, "question_style": 0.05, "none": 0.0}
)

# The paper's penalties (envs/userville.py, REWARD_FUNCTIONS).
_PAPER_JUDGED_MINOR = 0.1  # -0.1 per [Reward 0] question
_PAPER_JUDGED_MAJOR = 0.5  # -0.5 per [Reward 0] question
_PAPER_CODED = 1.0  # the code-computed rules cost -1 per violation
_PAPER_NONE = 0.0  # no_preference and professional have no reward function in the code

UNKNOWN_PENALTY = 0.05

# At most this many words make a concise question: the upper bound of the length-based
# "medium" effort, past which a question counts as long.
CONCISE_MAX_WORDS = 20
# answer_more: the paper's code penalises min(ask_turn - 3, 0), so three asking turns suffice.
ANSWER_MORE_MIN_TURNS = 3
# length: a question of exactly three sentences.
LENGTH_SENTENCES = 3


def _preference(name: str, category: Category, paper: float, description: str) -> Preference:
    return Preference(name, category, _DEFAULT_PENALTY[category], paper, description)


CATALOGUE: Mapping[str, Preference] = MappingProxyType(
    {
        p.name: p
        for p in (
            # Seen in training.
            _preference(
                "no_preference",
                "none",
                _PAPER_NONE,
                "No preference: any question is fine.",
            ),
            _preference(
                "concise_question",
                "question_style",
                _PAPER_JUDGED_MINOR,
                f"Keep each question to one short sentence (at most {CONCISE_MAX_WORDS} words).",
            ),
            _preference(
                "detail_question",
                "question_style",
                _PAPER_JUDGED_MINOR,
                "Give each question full context: what you found and why you ask.",
            ),
            _preference(
                "answer_more",
                "question_style",
                _PAPER_CODED,
                f"Ask in at least {ANSWER_MORE_MIN_TURNS} separate turns: the user is glad to"
                " answer more.",
            ),
            _preference(
                "only_begin",
                "question_style",
                _PAPER_CODED,
                "Ask questions only in your first turn, never later.",
            ),
            _preference(
                "no_ask",
                "question_style",
                _PAPER_CODED,
                "Do not ask the user any question.",
            ),
            _preference(
                "do_selection",
                "question_style",
                _PAPER_JUDGED_MAJOR,
                "Offer options to pick from (this or that, or a list) instead of open questions.",
            ),
            # The paper's code gives professional no reward function: nothing to penalise.
            _preference(
                "professional",
                "question_style",
                _PAPER_NONE,
                "The user is an expert: technical, precise questions are welcome.",
            ),
            _preference(
                "amateur",
                "question_style",
                _PAPER_JUDGED_MINOR,
                "The user is no programmer: ask in plain words, without code details.",
            ),
            _preference(
                "ask_many",
                "question_style",
                _PAPER_CODED,
                "Ask all your questions together in one turn, not spread over several.",
            ),
            _preference(
                "one_question",
                "question_style",
                _PAPER_JUDGED_MAJOR,
                "Ask at most one question per turn.",
            ),
            _preference(
                "first_try",
                "question_style",
                _PAPER_JUDGED_MINOR,
                "Try the task yourself first; ask only after a first attempt.",
            ),
            # Unseen in training: every one costs 0.5 per judged question in the paper.
            _preference(
                "lang_ita",
                "language",
                _PAPER_JUDGED_MAJOR,
                "Write every question in Italian.",
            ),
            _preference(
                "lang_multi",
                "language",
                _PAPER_JUDGED_MAJOR,
                "Write every question in more than one language.",
            ),
            _preference(
                "capital",
                "format",
                _PAPER_JUDGED_MAJOR,
                "Write every question in English, entirely in capital letters, code included.",
            ),
            _preference(
                "commas",
                "format",
                _PAPER_JUDGED_MAJOR,
                "Write every question without a single comma (of any script).",
            ),
            _preference(
                "json",
                "format",
                _PAPER_JUDGED_MAJOR,
                "Write every question as JSON (an object or an array).",
            ),
            _preference(
                "joke",
                "content",
                _PAPER_JUDGED_MAJOR,
                "Include a joke in every question.",
            ),
            _preference(
                "snippet",
                "content",
                _PAPER_JUDGED_MAJOR,
                "Include in every question a code snippet of three lines or more and the file"
                " or URL it comes from.",
            ),
            _preference(
                "length",
                "format",
                _PAPER_JUDGED_MAJOR,
                f"Write every question in exactly {LENGTH_SENTENCES} sentences.",
            ),
        )
    }
)

# Older trajectories write no_commas for the paper's commas.
ALIASES: Mapping[str, str] = MappingProxyType({"no_commas": "commas"})


def canonical(name: str) -> str:
    """The catalogue name for `name`: trimmed, lower-cased, aliases resolved."""
    key = name.strip().lower()
    return ALIASES.get(key, key)


def is_known(name: str) -> bool:
    """Whether `name` (or its alias) is one of the paper's 20 preferences."""
    return canonical(name) in CATALOGUE


def paper_penalties() -> dict[str, float]:
    """The `paper` preset: each preference's penalty per violation in the paper's code."""
    return {name: p.paper_penalty for name, p in CATALOGUE.items()}
