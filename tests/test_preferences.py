"""The paper's preferences: catalogue, penalties, and each rule checker on paper-like questions."""

from __future__ import annotations

import pytest

from ppp_tui.core.preferences import (
    ALIASES,
    CATALOGUE,
    UNKNOWN_PENALTY,
    AskedQuestion,
    CheckResult,
    RuleViolation,
    canonical,
    check_questions,
    has_checker,
    is_known,
    paper_penalties,
)

SEEN = (
    "no_preference",
    "concise_question",
    "detail_question",
    "answer_more",
    "only_begin",
    "no_ask",
    "do_selection",
    "professional",
    "amateur",
    "ask_many",
    "one_question",
    "first_try",
)
UNSEEN = ("lang_ita", "lang_multi", "capital", "commas", "json", "joke", "snippet", "length")
CHECKED = (
    "commas",
    "capital",
    "json",
    "length",
    "snippet",
    "lang_ita",
    "one_question",
    "no_ask",
    "ask_many",
    "answer_more",
    "only_begin",
    "do_selection",
    "concise_question",
)


def q(text: str, turn: int | None = 1) -> AskedQuestion:
    return AskedQuestion(text, turn)


def violated(preference: str, *questions: AskedQuestion) -> tuple[RuleViolation, ...]:
    result = check_questions([preference], questions)
    assert result.unchecked == ()
    return result.violations


# --- Catalogue and penalties -----------------------------------------------------------------


def test_catalogue_holds_the_papers_twenty_preferences_in_order() -> None:
    assert tuple(CATALOGUE) == SEEN + UNSEEN
    assert all(CATALOGUE[name].name == name for name in CATALOGUE)


@pytest.mark.parametrize(
    ("name", "category", "penalty"),
    [
        ("lang_ita", "language", 0.10),
        ("lang_multi", "language", 0.10),
        ("commas", "format", 0.05),
        ("capital", "format", 0.05),
        ("json", "format", 0.05),
        ("length", "format", 0.05),
        ("joke", "content", 0.05),
        ("snippet", "content", 0.05),
        ("no_preference", "none", 0.0),
    ],
)
def test_language_format_content_and_none_defaults(
    name: str, category: str, penalty: float
) -> None:
    assert CATALOGUE[name].category == category
    assert CATALOGUE[name].default_penalty == penalty


def test_the_other_eleven_are_question_style_at_five_hundredths() -> None:
    style = [name for name, p in CATALOGUE.items() if p.category == "question_style"]
    assert style == [name for name in SEEN if name != "no_preference"]
    assert {CATALOGUE[name].default_penalty for name in style} == {0.05}
    assert UNKNOWN_PENALTY == 0.05


def test_paper_preset_uses_the_papers_reward_functions() -> None:
    paper = paper_penalties()
    assert set(paper) == set(CATALOGUE)
    for name in ("concise_question", "detail_question", "amateur", "first_try"):
        assert paper[name] == 0.1
    for name in ("do_selection", "one_question", *UNSEEN):
        assert paper[name] == 0.5
    # Computed from the trajectory in the paper's code, -1 each.
    for name in ("answer_more", "only_begin", "no_ask", "ask_many"):
        assert paper[name] == 1.0
    # No reward function in the paper's code.
    assert paper["professional"] == 0.0
    assert paper["no_preference"] == 0.0


def test_every_description_is_one_line_about_the_questions() -> None:
    for preference in CATALOGUE.values():
        assert preference.description
        assert "\n" not in preference.description
    assert "20 words" in CATALOGUE["concise_question"].description
    assert "3 sentences" in CATALOGUE["length"].description


# --- Names -------------------------------------------------------------------------------------


def test_no_commas_is_an_alias_for_commas() -> None:
    assert ALIASES == {"no_commas": "commas"}
    assert canonical("no_commas") == "commas"
    assert canonical("  No_Commas ") == "commas"
    assert canonical("JSON") == "json"
    assert canonical("Prefers_Haiku") == "prefers_haiku"
    assert is_known("no_commas")
    assert not is_known("prefers_haiku")


def test_exactly_the_thirteen_rules_have_checkers() -> None:
    assert [name for name in CATALOGUE if has_checker(name)] == [
        name for name in CATALOGUE if name in CHECKED
    ]
    assert len(CHECKED) == 13
    assert has_checker("no_commas")
    assert not has_checker("joke")
    assert not has_checker("no_preference")


def test_alias_is_checked_under_its_canonical_name_once() -> None:
    result = check_questions(
        ["no_commas", "commas"], [q("Which file, models.py or views.py, holds the bug?")]
    )
    assert result == CheckResult(
        (RuleViolation("commas", "Which file, models.py or views.py, holds the bug?", 1),), ()
    )


def test_unknown_and_rule_less_preferences_are_unchecked_in_stated_order() -> None:
    result = check_questions(
        ["joke", "prefers_haiku", "no_preference", "joke", "json", "Professional"],
        [q('{"question": "Which Django version do you use?"}')],
    )
    assert result.violations == ()
    assert result.unchecked == ("joke", "prefers_haiku", "professional")


def test_no_preference_never_violates() -> None:
    assert check_questions(["no_preference"], [q("WHAT, IF ANYTHING, IS WRONG?")]) == CheckResult(
        (), ()
    )


def test_violations_follow_stated_preference_order() -> None:
    questions = [q("Which file, models.py or views.py?"), q("which python version do you use?", 2)]
    result = check_questions(["capital", "commas"], questions)
    assert [v.preference for v in result.violations] == ["capital", "capital", "commas"]


# --- Per-question rules: one violation per question that breaks them ------------------------


def test_commas_flags_each_question_with_a_comma() -> None:
    ok = q("Should the separability matrix treat nested compound models as separable?")
    bad = q("For nested models, should the matrix still be diagonal?", 2)
    assert violated("commas", ok, bad) == (RuleViolation("commas", bad.text, 2),)


def test_capital_wants_the_entire_question_upper_case_code_included() -> None:
    ok = q("SHOULD I CHANGE `SEPARABILITY_MATRIX` IN MODELING/SEPARABLE.PY?")
    lower_code = q("SHOULD I CHANGE `separability_matrix`?", 2)
    bad = q("Should I change the separability matrix?", 3)
    chinese = q("我应该修改哪个函数\uff1f", 4)
    assert violated("capital", ok, lower_code, bad, chinese) == (
        RuleViolation("capital", lower_code.text, 2),
        RuleViolation("capital", bad.text, 3),
        RuleViolation("capital", chinese.text, 4),
    )


def test_json_wants_a_json_object_or_array() -> None:
    ok = q('{"question": "Which function computes the matrix?", "options": ["a", "b"]}')
    fenced = q('```json\n{"question": "Which Python version?"}\n```')
    array = q('["Which function computes the matrix?"]')
    broken = q('{"question": "Which function?"', 2)
    prose = q("Which function computes the matrix?", 3)
    assert violated("json", ok, fenced, array, broken, prose) == (
        RuleViolation("json", broken.text, 2),
        RuleViolation("json", prose.text, 3),
    )


def test_length_wants_exactly_three_sentences() -> None:
    three = q(
        "I found the bug in separable.py, e.g. in _cstack. Nested models lose their structure. "
        "Should the fix go in _cstack or in _separable?"
    )
    two = q("Nested models lose their structure. Should I fix _cstack?", 2)
    four = q("I read the issue. I ran the tests. Two fail. Which one matters?", 3)
    assert violated("length", three, two, four) == (
        RuleViolation("length", two.text, 2),
        RuleViolation("length", four.text, 3),
    )


def test_snippet_wants_three_lines_of_code_and_where_they_are_from() -> None:
    block = q(
        "In astropy/modeling/separable.py:\n```python\ncm = Linear1D(10) & Linear1D(5)\n"
        "m = Pix2Sky_TAN() & cm\nseparability_matrix(m)\n```\nIs this the call that fails?"
    )
    inline = q("Is `separability_matrix(m1 & m2)` in separable.py the call that fails?", 2)
    no_reference = q("Does this fail?\n```python\na = 1\nb = 2\nf(a, b)\n```", 3)
    bare = q("Which call fails for you?", 4)
    assert violated("snippet", block, inline, no_reference, bare) == (
        RuleViolation("snippet", inline.text, 2),
        RuleViolation("snippet", no_reference.text, 3),
        RuleViolation("snippet", bare.text, 4),
    )


def test_lang_ita_wants_italian_and_never_takes_english_for_it() -> None:
    italian = q("Quale funzione calcola la matrice di separabilità?")
    italian_with_code = q("Devo modificare il file `separable.py` o `core.py`?")
    english = q("Which function computes the separability matrix?", 2)
    # English with words Italian shares (a, in, come, per, all) and CI is still English.
    tricky = q("Should I come back to all the CI failures in a new PR, per your notes?", 3)
    spanish = q("¿Qué función calcula la matriz?", 4)
    assert violated("lang_ita", italian, italian_with_code, english, tricky, spanish) == (
        RuleViolation("lang_ita", english.text, 2),
        RuleViolation("lang_ita", tricky.text, 3),
        RuleViolation("lang_ita", spanish.text, 4),
    )


def test_do_selection_wants_options_to_pick_from() -> None:
    either_or = q("Should the fix go in _cstack or _separable?")
    listed = q("Which Python version do you use?\n1. 3.10\n2. 3.11\n3. 3.12")
    lettered = q("Which behaviour do you expect: (a) diagonal matrix (b) full matrix?")
    open_question = q("Which function do you think is wrong?", 2)
    assert violated("do_selection", either_or, listed, lettered, open_question) == (
        RuleViolation("do_selection", open_question.text, 2),
    )


def test_concise_question_allows_at_most_twenty_words() -> None:
    short = q("Which function computes the separability matrix?")
    twenty = q(" ".join(["word"] * 19) + " ok?")
    long = q(
        "Before I change anything, could you tell me whether the separability matrix should "
        "treat nested compound models exactly like flat ones?",
        2,
    )
    assert violated("concise_question", short, twenty, long) == (
        RuleViolation("concise_question", long.text, 2),
    )


def test_per_question_rules_have_nothing_to_flag_without_questions() -> None:
    assert check_questions(["commas", "json", "lang_ita"], []) == CheckResult((), ())


# --- Rules over the whole trajectory --------------------------------------------------------


def test_no_ask_costs_once_however_many_questions() -> None:
    first = q("Which file holds the bug?", 2)
    assert violated("no_ask", first, q("Which function?", 3), q("Which test?", 4)) == (
        RuleViolation("no_ask", first.text, 2),
    )
    assert violated("no_ask") == ()


def test_only_begin_allows_questions_in_the_first_turn_only() -> None:
    assert violated("only_begin", q("Which file?", 1), q("Which function?", 1)) == ()
    late = q("Which test reproduces it?", 4)
    assert violated("only_begin", q("Which file?", 1), late, q("And the function?", 6)) == (
        RuleViolation("only_begin", late.text, 4),
    )


def test_ask_many_wants_all_questions_in_one_turn() -> None:
    assert violated("ask_many", q("Which file?", 2), q("Which function?", 2)) == ()
    second_turn = q("Which test fails?", 5)
    assert violated("ask_many", q("Which file?", 2), second_turn, q("Why?", 7)) == (
        RuleViolation("ask_many", second_turn.text, 5),
    )


def test_answer_more_costs_one_per_asking_turn_short_of_three() -> None:
    assert violated("answer_more", q("Which file?", 1), q("Which function?", 3), q("Why?", 4)) == ()
    # Two questions in one turn are one ask: two turns are missing.
    assert violated("answer_more", q("Which file?", 1), q("Which function?", 1)) == (
        RuleViolation("answer_more", None, None),
        RuleViolation("answer_more", None, None),
    )
    assert len(violated("answer_more")) == 3


def test_one_question_allows_one_question_per_turn() -> None:
    assert violated("one_question", q("Which file?", 1), q("Which function?", 2)) == ()
    two_in_one_text = q("Which file holds the bug? And which function?", 3)
    second_in_turn = q("Which Python version?", 4)
    assert violated("one_question", two_in_one_text, q("Which test fails?", 4), second_in_turn) == (
        RuleViolation("one_question", two_in_one_text.text, 3),
        RuleViolation("one_question", second_in_turn.text, 4),
    )


def test_turn_rules_are_unchecked_when_turns_are_unknown() -> None:
    questions = [q("Which file?", None), q("Which function?", None)]
    result = check_questions(["only_begin", "ask_many", "answer_more", "one_question"], questions)
    assert result == CheckResult((), ("only_begin", "ask_many", "answer_more", "one_question"))


def test_turn_rules_still_decide_what_unknown_turns_cannot_change() -> None:
    # A question in turn 3 breaks only_begin whatever the other question's turn was.
    late = q("Which function?", 3)
    result = check_questions(["only_begin", "no_ask"], [q("Which file?", None), late])
    assert result.violations == (
        RuleViolation("only_begin", late.text, 3),
        RuleViolation("no_ask", "Which file?", None),
    )
    assert result.unchecked == ()
    # A single question is a single asking turn, known turn or not.
    alone = check_questions(["ask_many", "answer_more"], [q("Which file?", None)])
    assert alone == CheckResult(
        (RuleViolation("answer_more", None, None), RuleViolation("answer_more", None, None)), ()
    )
