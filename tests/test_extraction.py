"""Question extraction (SPEC 3): the sentences of a response that end in "?", outside code
blocks and quoted text."""

from __future__ import annotations

import pytest

from ppp_tui.core.extraction import extract_questions


def test_the_sentences_ending_in_a_question_mark_in_order() -> None:
    response = (
        "I read the handler. Should I add tests? Which framework do you prefer? "
        "I will wait for your answer."
    )
    assert extract_questions(response) == [
        "Should I add tests?",
        "Which framework do you prefer?",
    ]


def test_questions_from_every_paragraph() -> None:
    response = (
        "The migration is ready. Is a downtime window fine?\n"
        "\n"
        "The second part touches logging.\n"
        "What about log levels? Should DEBUG go to a file?"
    )
    assert extract_questions(response) == [
        "Is a downtime window fine?",
        "What about log levels?",
        "Should DEBUG go to a file?",
    ]


def test_a_question_wrapped_over_two_lines_is_one_question() -> None:
    assert extract_questions("Should the retry limit\nstay at three? I think so.") == [
        "Should the retry limit stay at three?"
    ]


def test_statements_are_not_questions() -> None:
    assert extract_questions("This is a statement. Another one! And a third.") == []


@pytest.mark.parametrize("empty", [None, "", "   ", "\n\n"])
def test_no_text_no_questions(empty: str | None) -> None:
    assert extract_questions(empty) == []


@pytest.mark.parametrize("fence", ["```", "~~~"])
def test_fenced_code_blocks_are_skipped(fence: str) -> None:
    response = (
        "Here is the prompt:\n"
        f"{fence}python\n"
        "name = input('What is your name?')\n"
        "ok = confirm('Continue?')\n"
        f"{fence}\n"
        "Does that read well?"
    )
    assert extract_questions(response) == ["Does that read well?"]


def test_block_quotes_are_skipped() -> None:
    response = (
        "You wrote:\n"
        "> Can you make it faster?\n"
        "> And could it cache results?\n"
        "Sure. Shall I start with the cache?"
    )
    assert extract_questions(response) == ["Shall I start with the cache?"]


def test_a_sentence_ending_inside_inline_code_is_not_a_question() -> None:
    assert extract_questions("Rails calls this `valid?`. Then it saves `record.persisted?`") == []


def test_a_question_mark_inside_inline_code_does_not_split_a_question() -> None:
    assert extract_questions("Should I call `user.admin?` before `save`?") == [
        "Should I call `user.admin?` before `save`?"
    ]


def test_a_sentence_ending_inside_quotation_marks_is_not_a_question() -> None:
    response = 'The dialog says "Discard changes?" and the button says "OK". Fine.'
    assert extract_questions(response) == []
    assert extract_questions("The prompt reads \u201cContinue?\u201d today.") == []


def test_a_quoted_question_inside_a_real_question_stays_part_of_it() -> None:
    assert extract_questions('Should the dialog still say "Discard changes?" here?') == [
        'Should the dialog still say "Discard changes?" here?'
    ]


def test_list_items_are_questions_of_their_own_without_their_markers() -> None:
    response = (
        "A few questions:\n"
        "- Which database should the sessions use?\n"
        "* What port should the service listen on?\n"
        "1. Tabs or spaces?\n"
        "2) Keep the old endpoint?\n"
        "Thanks."
    )
    assert extract_questions(response) == [
        "Which database should the sessions use?",
        "What port should the service listen on?",
        "Tabs or spaces?",
        "Keep the old endpoint?",
    ]


def test_a_question_heading_label_is_dropped() -> None:
    assert extract_questions("**Question:** Which DB should I use?") == ["Which DB should I use?"]


@pytest.mark.parametrize(
    ("response", "questions"),
    [
        (
            "Do you want a formatter, e.g. Black, to run on save?",
            ["Do you want a formatter, e.g. Black, to run on save?"],
        ),
        (
            "Should we pin versions, i.e. Django 4.2 and DRF 3.14? I lean yes.",
            ["Should we pin versions, i.e. Django 4.2 and DRF 3.14?"],
        ),
        (
            "Should CI run linters, formatters etc. on every push? It takes a minute.",
            ["Should CI run linters, formatters etc. on every push?"],
        ),
        (
            "Is v1.2 fine? Version 2.0 is out.",
            ["Is v1.2 fine?"],
        ),
    ],
)
def test_abbreviations_and_decimals_do_not_split_sentences(
    response: str, questions: list[str]
) -> None:
    assert extract_questions(response) == questions


def test_a_short_question_on_its_own_counts() -> None:
    assert extract_questions("Why?") == ["Why?"]


def test_a_question_mark_in_parentheses_after_a_question() -> None:
    assert extract_questions("Is this right? (I think so.)") == ["Is this right?"]


# --- Only what is addressed to the user -------------------------------------------------------


def test_thinking_blocks_are_not_questions_to_the_user() -> None:
    response = (
        "<think>Why does the parser fail? Is it the regex?</think>\n"
        "Which Python version do you use?"
    )
    assert extract_questions(response) == ["Which Python version do you use?"]


def test_react_thoughts_are_left_out_and_the_answer_kept() -> None:
    response = (
        "Thought: Is the cache stale? Probably.\n"
        "Action: search\n"
        "Observation: nothing found. Why?\n"
        "Final Answer: Should I clear the cache?"
    )
    assert extract_questions(response) == ["Should I clear the cache?"]


def test_a_response_that_calls_a_tool_asks_nothing_in_its_prose() -> None:
    response = (
        "Where is this defined? Let me look.\n"
        "<function=execute_bash>\n<parameter=command>grep -rn foo</parameter>\n</function>"
    )
    assert extract_questions(response) == []


def test_full_width_question_marks_end_questions() -> None:
    assert extract_questions("我看过了。用哪个数据库\uff1f好的。") == ["用哪个数据库\uff1f"]
    assert extract_questions("Which database\uff1f I can wait.") == ["Which database\uff1f"]


def test_inline_asks_are_one_per_call_with_or_without_a_question_mark() -> None:
    from ppp_tui.core.extraction import inline_asks

    response = (
        "Is it the parser? I should ask.\n"
        "<function=ask_question>\n<parameter=query>Please share the traceback</parameter>\n"
        "</function>"
    )
    assert inline_asks(response) == ["Please share the traceback"]
    assert inline_asks("No tools here?") is None
    empty = "<function=ask_question>\n<parameter=query></parameter>\n</function>"
    assert inline_asks(empty) == [""]


def test_a_short_responses_questions_are_remembered_and_a_long_ones_are_not() -> None:
    from ppp_tui.core.runs import checked

    checked._short_turn_questions.cache_clear()
    short = "Done with the parser. Which port should it use? And the timeout?"
    long = "All set. " * 200 + "Which port should it use?"
    for _ in range(2):
        assert checked._turn_questions(short) == ("Which port should it use?", "And the timeout?")
        assert checked._turn_questions(long) == ("Which port should it use?",)
    info = checked._short_turn_questions.cache_info()
    assert (info.hits, info.currsize) == (1, 1)
