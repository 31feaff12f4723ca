"""The rule checkers against the PPP paper's own criteria, on questions whose answer is known.

Each case is a question and whether it complies with the preference as the paper's simulated
user is told to judge it (the reward rule of each preference). Every rule-checked preference
must agree on at least 95% of them; the cases include the ones an earlier reading got wrong.
"""

from __future__ import annotations

import pytest

from ppp_tui.core.preferences import AskedQuestion, check_questions

MIN_AGREEMENT = 0.95

SNIPPET = (
    "In src/app/models.py I see:\n```python\nclass User(Base):\n    name = Column(String)\n"
    "    email = Column(String)\n```\nShould email be unique?"
)

CASES: dict[str, list[tuple[str, bool]]] = {
    "commas": [
        ("Should the matrix stay diagonal for nested models?", True),
        ("For nested models, should the matrix stay diagonal?", False),
        ("要修改哪个文件、哪个函数\uff1f", False),  # the ideographic comma is a comma
        ("修改哪个文件\uff0c哪个函数\uff1f", False),
        ("Which file should I edit?", True),
        ("Is `f(a, b)` the failing call?", False),  # code included
        ("Which Python version do you run?", True),
        ("Do you want tests or docs first?", True),
        ("Yes, no or maybe?", False),
        ("What is the expected output for 1 2 3?", True),
    ],
    "capital": [
        ("SHOULD I CHANGE THE SEPARABILITY MATRIX?", True),
        ("SHOULD I EDIT SEPARABLE.PY?", True),
        ("SHOULD I CHANGE `separability_matrix`?", False),  # code included
        ("Should I change the matrix?", False),
        ("SHOULD I CHANGE THE MATRIX? thanks", False),
        ("WHICH PYTHON VERSION: 3.10 OR 3.11?", True),
        ("IS `F(A, B)` THE FAILING CALL?", True),
        ("我应该修改哪个函数\uff1f", False),  # no letter with case: nothing in capitals
        ("È GIUSTO CAMBIARE LA FUNZIONE?", False),  # in capitals, but not in English
        ("SOLL ICH DIE GROßE DATEI ÄNDERN?", False),  # German
        ("ΠΟΙΑ ΣΥΝΑΡΤΗΣΗ ΝΑ ΑΛΛΑΞΩ;", False),  # noqa: RUF001 (Greek capitals)
        ("SEPARABLE.PY を修正しますか\uff1f", False),  # Japanese
        ("DO YOU WANT TESTS?", True),
        ("DO YOU want TESTS?", False),
        ("IS THE BUG IN `_cstack`?", False),
    ],
    "json": [
        ('{"question": "Which file?"}', True),
        ('["Which file?", "Which function?"]', True),  # an array is JSON too
        ('```json\n{"question": "Which file?"}\n```', True),
        ('[{"q": "Which file?", "options": ["a.py", "b.py"]}]', True),
        ("Which file should I edit?", False),
        ('{"question": "Which file?"', False),
        ("question: Which file?", False),
        ('Here it is: {"question": "Which file?"}', False),
        ("{'question': 'Which file?'}", False),  # not JSON: single quotes
        ('{"questions": ["Which file?"], "context": "nested models"}', True),
    ],
    "length": [
        ("I read the issue. The matrix looks wrong. Should I fix _cstack?", True),
        ("The matrix looks wrong. Should I fix _cstack?", False),
        ("Should I fix _cstack?", False),
        ("I ran the tests. Two fail. Both are in separable.py. Which matters?", False),
        ("I checked e.g. the docs. Nothing is said. Is it a bug?", True),
        ("Tests fail! I looked at the log. Is it the parser?", True),
    ],
    "snippet": [
        (SNIPPET, True),
        (
            "See https://github.com/org/repo/blob/main/run.py:\n```\nimport sys\nargs = sys.argv\n"
            "main(args)\n```\nIs main called right?",
            True,
        ),
        ("Is `separability_matrix(m)` in separable.py the call that fails?", False),  # one line
        ("Does this fail?\n```python\na = 1\nb = 2\nf(a, b)\n```", False),  # no file or URL
        ("In models.py:\n```python\nname = Column(String)\n```\nUnique?", False),  # one line
        ("Which call fails for you?", False),
        (
            "In utils/io.py:\n    def read(path):\n        with open(path) as f:\n"
            "            return f.read()\nShould read() decode bytes?",
            True,
        ),
        ("Should I change config.toml?", False),
    ],
    "lang_ita": [
        ("Quale funzione calcola la matrice di separabilità?", True),
        ("Confermi?", True),
        ("Procedo?", True),
        ("Va bene così?", True),
        ("Devo modificare il file `separable.py` o `core.py`?", True),
        ("Preferisci PostgreSQL o MySQL?", True),
        ("Which function computes the matrix?", False),
        ("Confirm?", False),
        ("Proceed?", False),
        ("Should I come back to all the CI failures in a new PR, per your notes?", False),
        ("¿Qué función calcula la matriz?", False),
        ("¿Confirmas?", False),
        ("Quelle fonction calcule la matrice ?", False),
        ("Continue?", False),
        ("Update?", False),
        ("Hai una preferenza per il nome del file?", True),
        ("Lo metto in utils.py o in core.py?", True),  # code aside
        (
            "Il metodo CompoundModel._calculate_separability_matrix in "
            "astropy/modeling/separable.py sbaglia: lo correggo?",
            True,
        ),
        ("Should I put it in utils.py or in core.py?", False),
    ],
    "do_selection": [
        ("Should the fix go in _cstack or _separable?", True),
        ("PostgreSQL/MySQL?", True),
        ("Which database, PostgreSQL/MySQL?", True),
        ("Which Python version do you use?\n1. 3.10\n2. 3.11\n3. 3.12", True),
        ("Which behaviour do you expect: (a) diagonal matrix (b) full matrix?", True),
        ("Do you want either tests or docs first?", True),
        ("Should I add tests or not?", False),  # a yes/no question
        ("Do you see error or warning messages?", False),  # or inside a noun phrase
        ("Should I retry when the request times out or fails?", False),  # or in a condition
        ("Preferisci JSON o YAML?", True),
        ("Which function do you think is wrong?", False),
        ("Is either of them installed on your machine?", False),  # either: not a choice
        ("Do you see any errors or warnings?", False),  # or: not a choice
        ("Should I keep going or not?", False),
        ("Is there a ticket or something I should read?", False),
        ("What is in src/app/models.py?", False),  # a path is not a choice
        ("Did you mean input/output handling?", False),
        ("Can you tell me more about the bug?", False),
        ("Do you want me to add tests, or should I leave them?", True),
        ("JSON or YAML?", True),
    ],
    "concise_question": [
        ("Which function computes the separability matrix?", True),
        ("Which file?", True),
        ("I looked at separable.py. Which function is wrong?", False),  # two sentences
        ("The tests fail. Why?", False),
        (
            "Before I change anything, could you tell me whether the separability matrix "
            "should treat nested compound models exactly like flat ones?",
            False,
        ),
        ("Should nested models be separable?", True),
        ("Is `_cstack` the function to fix?", True),
        ("Thanks. Which version?", False),
        ("Do you want the fix in _cstack or in _separable?", True),
    ],
    "one_question": [
        ("Which file should I edit?", True),
        ("Which file? Which function?", False),
        ('Should the error say "Which file?" when none is given?', True),  # quoted
        ("Should I call `input('Name?')` here?", True),  # code
        ("Which file should I edit", True),  # an ask without "?" is one question
        ("哪个文件\uff1f哪个函数\uff1f", False),
        ("Which file should I edit? Also, should I add tests?", False),
        ("Is the prompt “Continue?” right?", True),
        ("Which port? And should I also add TLS", False),  # the second lacks its "?"
        ("Which port should I use? Also tell me whether to add TLS.", False),
        ("Which database should the cache use? Also tell me the port", False),  # a request
        ("Which database? Please share the port too.", False),
        ("Please share the traceback so I can look.", True),  # one request is one question
        ("Which database should I use? I can set it up.", True),  # a statement follows
        ("When I run the tests, two fail. Which one should I fix first?", True),
        ("Welchen Port soll ich nehmen? Und soll ich auch TLS hinzufügen", False),
    ],
}


def _agreement(preference: str) -> tuple[float, list[str]]:
    wrong = []
    for text, complies in CASES[preference]:
        result = check_questions([preference], [AskedQuestion(text, 1)])
        if (not result.violations) != complies:
            wrong.append(text)
    return 1 - len(wrong) / len(CASES[preference]), wrong


@pytest.mark.parametrize("preference", sorted(CASES))
def test_each_rule_agrees_with_the_papers_criterion(preference: str) -> None:
    agreement, wrong = _agreement(preference)
    assert agreement >= MIN_AGREEMENT, (preference, agreement, wrong)


def test_every_rule_checked_per_question_preference_has_cases() -> None:
    from ppp_tui.core.preferences import has_checker

    whole_trajectory = {"no_ask", "only_begin", "ask_many", "answer_more"}
    checked = {
        name
        for name in (
            "commas",
            "capital",
            "json",
            "length",
            "snippet",
            "lang_ita",
            "one_question",
            "do_selection",
            "concise_question",
        )
    }
    assert all(has_checker(name) for name in checked | whole_trajectory)
    assert set(CASES) == checked
