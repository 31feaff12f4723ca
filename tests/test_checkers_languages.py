"""The rule checkers in other languages and scripts, and with code mixed in.

Each case is an ask and whether it complies with the preference by its criterion
(docs/preferences.md). Unlike tests/test_paper_criteria.py, every case here must be decided
right: they pin the criteria for capital, lang_ita, one_question and do_selection.
"""

# The cases are written in their own scripts, Greek and Cyrillic letters that look Latin and
# full-width question marks included: that is what they test.
# ruff: noqa: RUF001

from __future__ import annotations

import pytest

from ppp_tui.core.preferences import AskedQuestion, check_questions


def complies(preference: str, text: str) -> bool:
    result = check_questions([preference], [AskedQuestion(text, 1)])
    assert result.unchecked == ()
    return not result.violations


def _cases(preference: str, cases: list[tuple[str, bool]]) -> list[tuple[str, str, bool]]:
    return [(preference, text, verdict) for text, verdict in cases]


# capital: the paper's criterion, "the question is in English and all capitalized". Every
# letter that has case is a capital and at least one is; a question in another language
# written in capitals does not comply.
CAPITAL = [
    ("SHOULD I KEEP THE OLD PARAMETER?", True),
    ("USE REDIS?", True),  # no function word, but only letters English writes
    ("WHICH PORT: 8080 OR 9090?", True),
    ("SHOULD I RUN `PYTEST -X`?", True),  # code in capitals
    ("SHOULD I RUN `pytest -x`?", False),  # code included
    ("È GIUSTO IL PARAMETRO?", False),  # Italian in capitals is not English
    ("PERCHÉ NON FUNZIONA IL 2º TEST?", False),
    ("PERCHé NON FUNZIONA?", False),
    ("SOLL ICH DIE DATEI ÄNDERN?", False),  # German in capitals
    ("SOLL ICH DIE GROßE DATEI ÄNDERN?", False),
    ("Soll ich die große Datei ändern?", False),
    ("ÇA MARCHE DÉJÀ AVEC `PYTEST -X` ?", False),  # French
    ("¿DEBO CAMBIAR LA FUNCIÓN?", False),  # Spanish
    ("ΠΟΙΑ ΘΥΡΑ ΝΑ ΧΡΗΣΙΜΟΠΟΙΗΣΩ;", False),  # Greek capitals
    ("КАКОЙ ПОРТ ИСПОЛЬЗОВАТЬ?", False),  # Cyrillic capitals
    ("SEPARABLE.PY を修正しますか？", False),  # Japanese, a file name in capitals
    ("ポートは 8080 ですか？", False),  # no cased letter at all
    ("我应该修改哪个函数？", False),
    ("هل أستخدم المنفذ 8080؟", False),  # Arabic has no case
    ("3.10?", False),
    ("ǅ?", False),  # a title-case letter is not a capital
    ("SHOULD I USE THE ﬁLE?", False),  # a small ligature
]

# lang_ita: the prose is Italian; code (blocks, inline, paths, identifiers, flags) is set
# aside; English and the other Romance languages are not Italian.
LANG_ITA = [
    (
        "Il metodo CompoundModel._calculate_separability_matrix in "
        "astropy/modeling/separable.py restituisce una matrice sbagliata: lo correggo?",
        True,
    ),
    ("Lo metto in utils.py o in core.py?", True),
    (
        "Vuoi che esegua pytest tests/test_separable.py -k nested --maxfail=1 prima di fare "
        "il commit?",
        True,
    ),
    ("Devo aggiornare i test in tests/unit/test_io.py?", True),
    ("Uso os.path.join o pathlib.Path?", True),
    (
        "Ho visto che `separability_matrix()` restituisce False per i modelli annidati:\n"
        "```python\nm = a & b\nprint(separability_matrix(m))\n```\n"
        "È questo il comportamento atteso?",
        True,
    ),
    ("Preferisci https://example.com/docs o il README?", True),
    ("Should I put it in utils.py or in core.py?", False),
    ("Should I run pytest tests/test_x.py -k nested before the commit?", False),
    ("Is `CompoundModel._calculate_separability_matrix` in separable.py wrong?", False),
    ("Soll ich die Funktion in utils.py ändern?", False),  # German
    ("Dois-je modifier le fichier utils.py ?", False),  # French
    ("Devo modificar o arquivo utils.py ou core.py?", False),  # Portuguese
    ("Debo cambiar la función en utils.py?", False),  # Spanish without ¿
    ("¿Debo cambiar la función en `utils.py`?", False),
    ("In a loop?", False),
]

# one_question: questions are counted by their form, not only by "?".
ONE_QUESTION = [
    ("Which port? And should I also add TLS", False),
    ("Which port should I use? Also tell me whether to add TLS.", False),
    ("Which port should I use, and should I add TLS?", False),
    ("Do you want me to keep the old API and do you also want a deprecation warning?", False),
    ("Which port should I use. Should I also add TLS", False),
    ("Which file should I edit", True),
    ("When I run the tests, two fail. Which one should I fix first?", True),  # a statement
    ("What you see is the output. Is it right?", True),  # a statement with "what"
    ("Do the migration first. Which port should I use?", True),  # an imperative
    ("Should I add tests? Should you need more context, let me know.", True),  # a condition
    ("Why does it fail? Because _cstack drops the matrix. Should I fix it?", True),  # rhetorical
    ("Should I add tests; they are missing?", True),
    ("See https://example.com/search?q=matrix for the spec. Which file?", True),  # URL
    ("Quale porta uso? E devo aggiungere anche TLS", True),  # Italian: a statement of need
    ("Quale porta uso? Vuoi anche TLS", False),  # Italian
    ("Quale porta uso? Dimmi se serve anche TLS.", False),
    ("Welchen Port soll ich nehmen? Und soll ich auch TLS hinzufügen", False),  # German
    ("Welchen Port soll ich nehmen? Wie besprochen, nutze ich TLS.", True),
    ("Quel port dois-je utiliser ? Faut-il aussi ajouter TLS", False),  # French
    ("Quel port dois-je utiliser ? J'ajoute aussi TLS.", True),
    ("¿Qué puerto uso? ¿Y agrego TLS", False),  # Spanish
    ("Qué puerto uso? Cómo lo configuro", False),
    ("Ποια θύρα να χρησιμοποιήσω; Να προσθέσω και TLS;", False),  # Greek ";" is "?"
    ("Ποια θύρα να χρησιμοποιήσω;", True),
    ("Какой порт использовать? Нужно ли добавить TLS", False),  # Russian
    ("Какой порт использовать? Я добавлю TLS.", True),
    ("ポートはどれですか。TLSも追加しますか", False),  # Japanese か
    ("ポートは8080でいいですか？", True),
    ("哪个端口？要加 TLS 吗", False),  # Chinese 吗
    ("Which port should I use?\n```python\nif port is None: ask('Which port?')\n```", True),
]

# do_selection: the ask names alternatives for the user to pick one of; an "or" the answer
# does not pick between offers nothing.
DO_SELECTION = [
    ("Should I add tests or not?", False),  # yes/no
    ("Do you see error or warning messages?", False),  # whether any happened
    ("Should I log error or warning messages?", False),  # one compound noun
    ("Which do you prefer: error or warning messages?", True),
    ("Do you want input/output handled?", False),
    ("Do you want read/write access?", False),
    ("Should I retry when the request times out or fails?", False),  # a condition
    ("Should I add two or more tests?", False),
    ("Did it run with or without the flag?", False),
    ("Should I use JSON or YAML files?", True),
    ("Let me know if you prefer JSON or YAML.", True),
    ("Is there a preferred format, JSON or YAML?", True),
    ("Should I add tests, or leave them?", True),
    ("Should the fix go in _cstack or maybe _separable?", True),
    ("Should I patch `_cstack` (a) in place or (b) in a new helper?", True),
    ("I found:\n- _cstack drops the matrix\n- _separable is fine\nShould I fix both?", False),
    ("Which one?\n- patch _cstack\n- rewrite _separable", True),
    ("Preferisci JSON o YAML?", True),  # Italian
    ("Preferisci che lo faccia o no?", False),
    ("Soll ich JSON oder YAML verwenden?", True),  # German
    ("Soll ich Tests hinzufügen oder nicht?", False),
    ("Préférez-vous JSON ou YAML ?", True),  # French
    ("Voulez-vous des tests ou pas ?", False),
    ("¿Uso JSON o YAML?", True),  # Spanish
    ("JSON или YAML?", True),  # Russian
    ("Добавить тесты или нет?", False),
    ("JSON ή YAML;", True),  # Greek
    ("Να προσθέσω τεστ ή όχι;", False),
    ("JSONとYAML、それともTOML？", True),  # Japanese
    ("テストを追加するかどうか教えてください。", False),
    ("用 JSON 还是 YAML？", True),  # Chinese
]

CASES = [
    *_cases("capital", CAPITAL),
    *_cases("lang_ita", LANG_ITA),
    *_cases("one_question", ONE_QUESTION),
    *_cases("do_selection", DO_SELECTION),
]


@pytest.mark.parametrize(("preference", "text", "verdict"), CASES)
def test_each_ask_gets_the_verdict_of_the_criterion(
    preference: str, text: str, verdict: bool
) -> None:
    assert complies(preference, text) is verdict


def test_two_asks_of_one_turn_are_one_ask_for_one_question() -> None:
    # The form counts across the asks of a turn too: the second lacks its "?".
    result = check_questions(
        ["one_question"], [AskedQuestion("Which port?", 1), AskedQuestion("Should I add TLS", 1)]
    )
    assert [v.question for v in result.violations] == ["Should I add TLS"]


@pytest.mark.parametrize(
    "text",
    [
        "a" * 100_000,
        "a; " * 30_000,
        "x_" * 50_000,
        "a/" * 50_000,
        "Which? " * 15_000,
        "ΠΟΙΑ; " * 15_000,
        "Do you see x or " * 6_000,
        "what " * 20_000,
        "any " * 20_000 + "or b",
        "- a\n" * 20_000,
        "(" * 50_000,
    ],
    ids=lambda text: repr(text[:8]),
)
def test_long_and_hostile_asks_get_a_verdict(text: str) -> None:
    # The checkers run on every imported question: these are the shapes that would make
    # a pattern backtrack badly (a hang here); their speed is benchmarks/bench_rank.py's.
    preferences = ["capital", "lang_ita", "one_question", "do_selection"]
    result = check_questions(preferences, [AskedQuestion(text, 1)])
    # Every one of the four is decided (none left unchecked), and "a" * 100_000 is
    # neither capitals nor Italian prose.
    assert result.unchecked == ()
    broken = {v.preference for v in result.violations}
    assert text != "a" * 100_000 or {"capital", "lang_ita"} <= broken
