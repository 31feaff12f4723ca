"""The question-effort classifier (SPEC 3, seed 001's ADR-001-002) and its labelled sets."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from ppp_tui.core.effort import classify, classify_effort, split_parts
from ppp_tui.core.evaluation import evaluate
from ppp_tui.core.model import Effort

DATA = Path(__file__).parent / "data"

# --- The ADR's examples ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "effort"),
    [
        # Low: a pick among offered options, answered at once.
        ("Which database: PostgreSQL or MySQL?", Effort.LOW),
        ("Do you prefer tabs or spaces?", Effort.LOW),
        ("Choose option A or B?", Effort.LOW),
        # Medium: the user decides something open, without research.
        ("What authentication method should we use?", Effort.MEDIUM),
        ("How should we handle errors?", Effort.MEDIUM),
        ("What is your preferred coding style?", Effort.MEDIUM),
        # High: investigation, blocking, architecture.
        ("Should we investigate caching strategies before proceeding?", Effort.HIGH),
        ("Should we investigate distributed caching strategies before proceeding?", Effort.HIGH),
        ("Do you want me to research authentication solutions?", Effort.HIGH),
        ("What architecture patterns should we consider?", Effort.HIGH),
        ("What architecture patterns should we consider for this microservice?", Effort.HIGH),
    ],
)
def test_adr_examples(question: str, effort: Effort) -> None:
    assert classify_effort(question) is effort
    assert classify(question).effort is effort


@pytest.mark.parametrize(
    ("question", "effort"),
    [
        ("Could you check what the staging server returns for /health?", Effort.HIGH),
        ("Can you paste the stack trace from the crash?", Effort.HIGH),
        ("Should I add a unit test for the parser?", Effort.LOW),
        ("Just to confirm, you want me to keep the old endpoint?", Effort.LOW),
    ],
)
def test_the_cost_to_the_user_decides_not_single_words(question: str, effort: Effort) -> None:
    """Asking the user to go and look is high; a yes/no on the agent's next step is low."""
    assert classify_effort(question) is effort


# --- Multi-part questions --------------------------------------------------------------------


def test_a_multi_part_question_takes_its_highest_parts_effort() -> None:
    """The ADR's low example followed by its medium one: the whole is medium."""
    result = classify("Do you prefer tabs or spaces? How should we handle errors?")

    assert result.effort is Effort.MEDIUM
    assert [(p.text, p.effort) for p in result.parts] == [
        ("Do you prefer tabs or spaces?", Effort.LOW),
        ("How should we handle errors?", Effort.MEDIUM),
    ]


def test_one_high_part_makes_the_whole_question_high() -> None:
    result = classify("Tabs or spaces? Also, what architecture patterns should we consider?")

    assert result.effort is Effort.HIGH
    assert [p.effort for p in result.parts] == [Effort.LOW, Effort.HIGH]


def test_a_single_question_is_its_own_only_part() -> None:
    result = classify("How should we handle errors?")
    assert [(p.text, p.effort) for p in result.parts] == [
        ("How should we handle errors?", Effort.MEDIUM)
    ]


def test_a_statement_before_a_question_is_context_not_a_part() -> None:
    assert split_parts("The plan adds 3 resources. Should I apply it?") == ["Should I apply it?"]


def test_the_adrs_multi_part_example_has_two_parts() -> None:
    """ADR-001-002: "Which database and what version should we use?" is two questions."""
    assert split_parts("Which database and what version should we use?") == [
        "Which database",
        "what version should we use?",
    ]


@pytest.mark.parametrize("joint", [", and ", "; "])
def test_a_question_joined_inside_one_sentence_takes_its_highest_parts_effort(
    joint: str,
) -> None:
    """The ADR's low example and its medium one joined in one sentence: the whole is medium."""
    result = classify(f"Do you prefer tabs or spaces{joint}how should we handle errors?")

    assert result.effort is Effort.MEDIUM
    assert [(p.text, p.effort) for p in result.parts] == [
        ("Do you prefer tabs or spaces", Effort.LOW),
        ("how should we handle errors?", Effort.MEDIUM),
    ]


# --- Context ---------------------------------------------------------------------------------

TTL_TASK = "Cache the product catalog in Redis with a 10-minute TTL."
TTL_QUESTION = "What TTL should the cached entries have?"


def test_a_question_the_task_already_answers_is_low() -> None:
    result = classify(TTL_QUESTION, TTL_TASK)

    assert result.effort is Effort.LOW
    assert result.answered_by_context


def test_without_the_answer_in_the_task_it_stays_medium() -> None:
    for context in (None, "Add a cache layer to the product service."):
        result = classify(TTL_QUESTION, context)
        assert result.effort is Effort.MEDIUM
        assert not result.answered_by_context


def test_context_cannot_do_the_users_investigation() -> None:
    """High-effort cues override: the task text may mention caching, the investigation
    before proceeding is still the user's work."""
    result = classify("Should we investigate caching strategies before proceeding?", TTL_TASK)
    assert result.effort is Effort.HIGH
    assert not result.answered_by_context


# --- Determinism -----------------------------------------------------------------------------


def test_the_classifier_is_deterministic() -> None:
    questions = [row["question"] for row in load("effort_labelled.jsonl")]
    first = [classify_effort(q) for q in questions]
    classify.cache_clear()
    classify_effort.cache_clear()
    second = [classify_effort(q) for q in reversed(questions)]

    assert first == second[::-1]


@pytest.mark.parametrize("name", ["effort_labelled.jsonl", "effort_holdout.jsonl"])
def test_the_fast_path_agrees_with_the_full_classification(name: str) -> None:
    """classify_effort (the import's path) and classify (with parts, for the screen and
    `classify --json`) must never label a question differently."""
    for row in load(name):
        question, context = row["question"], row.get("context")
        assert classify_effort(question, context) is classify(question, context).effort, question


def test_a_question_asked_with_many_task_texts_keeps_each_ones_effort() -> None:
    """What a question's own words say is remembered across task texts; the effort with
    each task text is still the one `classify` gives, whichever text came first."""
    from ppp_tui.core.effort import classifier

    rows = load("effort_labelled.jsonl") + load("effort_holdout.jsonl")
    contexts = [None, "", TTL_TASK, *sorted({row["context"] for row in rows if row.get("context")})]
    pairs = [(row["question"], context) for row in rows for context in contexts[:12]]
    for order in (pairs, pairs[::-1]):
        classify_effort.cache_clear()
        classifier._own_effort.cache_clear()
        for question, context in order:
            assert classify_effort(question, context) is classify(question, context).effort


# --- The labelled sets -----------------------------------------------------------------------


def load(name: str) -> list[dict[str, str]]:
    with (DATA / name).open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


@pytest.mark.parametrize(
    "name", ["effort_labelled.jsonl", "effort_holdout.jsonl", "effort_blind.jsonl"]
)
def test_labelled_set_is_balanced_and_classified_accurately(name: str) -> None:
    """SPEC 3: a labelled set of at least 90-100 questions, about a third per level, on
    which the classifier (with each row's task text as context) scores >= 0.85."""
    rows = load(name)
    expected = [Effort(row["effort"]) for row in rows]
    predicted = [classify_effort(row["question"], row.get("context")) for row in rows]

    assert len(rows) >= 90
    shares = {level: count / len(rows) for level, count in Counter(expected).items()}
    assert set(shares) == set(Effort)
    for level, share in shares.items():
        assert 0.25 <= share <= 0.42, f"{level}: {share:.0%} of {name}"

    result = evaluate(expected, predicted)
    assert result.total == len(rows)
    assert result.accuracy >= 0.85
    assert result.macro_f1 >= 0.85


def test_the_sets_do_not_share_examples() -> None:
    """A held-out or blind set that repeated labelled rows would measure nothing new (the
    same short question under another task is another example)."""
    labelled, holdout, blind = (
        {(row["question"].casefold(), row.get("context")) for row in load(name)}
        for name in ("effort_labelled.jsonl", "effort_holdout.jsonl", "effort_blind.jsonl")
    )
    assert not labelled & holdout
    assert not labelled & blind
    assert not holdout & blind


def test_an_imperative_request_without_you_is_still_high() -> None:
    """'Please send ...' asks the user to fetch something, though it never says 'you'."""
    assert classify_effort("Please send the prod config?") is Effort.HIGH
    assert classify_effort("Paste the failing stack trace here?") is Effort.HIGH
