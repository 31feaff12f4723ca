"""The last test run in one tool output: every runner's own summary, as it prints it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ppp_tui.core.sessions.evidence import find_test_run
from ppp_tui.core.sessions.model import TestRun as Run


def run(output: str) -> Run:
    found = find_test_run(output)
    assert found is not None
    return found


# -- pytest ------------------------------------------------------------------------

PYTEST_FAILED = """\
============================= test session starts ==============================
platform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0
rootdir: /home/dev/shop
configfile: pyproject.toml
collected 45 items

tests/test_cart.py ....F.....                                            [ 22%]
tests/test_db.py ..........s.......E.............                        [ 93%]
tests/test_cli.py ...                                                    [100%]

==================================== ERRORS ====================================
__________________________ ERROR at setup of test_save _________________________

    @pytest.fixture
    def db():
>       return connect("localhost:5432")
E       ConnectionRefusedError: [Errno 111] Connection refused

tests/conftest.py:9: ConnectionRefusedError
=================================== FAILURES ===================================
_______________________________ test_discount __________________________________

    def test_discount():
>       assert total([100], coupon="TEN") == 90
E       assert 100 == 90

tests/test_cart.py:31: AssertionError
=========================== short test summary info ============================
FAILED tests/test_cart.py::test_discount - assert 100 == 90
ERROR tests/test_db.py::test_save - ConnectionRefusedError: [Errno 111] Connection r...
============== 1 failed, 42 passed, 1 skipped, 1 error in 3.21s ===============
"""


def test_pytest_counts_errors_as_failed() -> None:
    found = run(PYTEST_FAILED)
    assert found == Run(42, 2, "pytest: 42 passed, 2 failed")
    assert found.fraction == pytest.approx(42 / 44)


def test_pytest_quiet_line_has_no_rule() -> None:
    output = """\
........................................F.                               [100%]
=================================== FAILURES ===================================
___________________________________ test_y _____________________________________
E       AssertionError: boom
=========================== short test summary info ============================
FAILED tests/test_x.py::test_y - AssertionError: boom
1 failed, 41 passed, 2 warnings in 3.21s
"""
    assert run(output) == Run(41, 1, "pytest: 41 passed, 1 failed")


def test_pytest_in_the_briefs_order_and_plural_errors() -> None:
    assert run("===== 41 passed, 2 failed, 1 skipped in 3.2s =====") == Run(
        41, 2, "pytest: 41 passed, 2 failed"
    )
    assert run("41 passed, 2 failed in 3.21s\n") == Run(41, 2, "pytest: 41 passed, 2 failed")
    line = "== 3 failed, 7 passed, 2 xfailed, 1 xpassed, 4 deselected, 2 errors in 1.05s =="
    assert run(line) == Run(7, 5, "pytest: 7 passed, 5 failed")


def test_pytest_in_colour_long_and_old_durations() -> None:
    colour = (
        "\x1b[31m================= \x1b[31m\x1b[1m1 failed\x1b[0m, \x1b[32m3 passed\x1b[0m"
        "\x1b[31m in 0.12s\x1b[0m\x1b[31m ==================\x1b[0m\n"
    )
    assert run(colour) == Run(3, 1, "pytest: 3 passed, 1 failed")
    long = "======================= 120 passed in 75.31s (0:01:15) ========================"
    assert run(long) == Run(120, 0, "pytest: 120 passed, 0 failed")
    assert run(long).fraction == 1.0
    old = "=========================== 3 passed in 0.05 seconds ==========================="
    assert run(old).passed == 3
    assert run("5 passed, 1 warning in 0.40s\r\n").passed == 5  # CRLF


def test_pytest_collection_error_is_a_failed_run() -> None:
    output = """\
==================================== ERRORS ====================================
____________________ ERROR collecting tests/test_app.py ________________________
ImportError while importing test module '/home/dev/app/tests/test_app.py'.
E   ModuleNotFoundError: No module named 'app.models'
=========================== short test summary info ============================
ERROR tests/test_app.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in 0.12s ===============================
"""
    found = run(output)
    assert found == Run(0, 1, "pytest: 0 passed, 1 failed")
    assert found.fraction == 0.0


def test_two_pytest_runs_the_second_counts() -> None:
    output = (
        "FAILED tests/test_a.py::test_one - assert 1 == 2\n"
        "========================= 5 failed, 20 passed in 1.10s =========================\n"
        "$ pytest -q\n"
        ".........................                                                [100%]\n"
        "25 passed in 1.02s\n"
    )
    assert run(output) == Run(25, 0, "pytest: 25 passed, 0 failed")


def test_pytest_with_no_test_is_no_run() -> None:
    nothing = "============================ no tests ran in 0.01s ============================="
    assert find_test_run(nothing) is None
    assert find_test_run("====== 3 skipped in 0.02s ======") is None
    assert find_test_run("======= 12 deselected in 0.05s =======") is None
    assert find_test_run("========== 12 tests collected in 0.03s ==========") is None
    # ... and the run before it counts
    assert run("4 passed, 1 failed in 0.3s\n" + nothing) == Run(4, 1, "pytest: 4 passed, 1 failed")


# -- unittest ----------------------------------------------------------------------

UNITTEST_FAILED = """\
..F.E.......
======================================================================
ERROR: test_load (tests.test_io.TestIO.test_load)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/home/dev/app/tests/test_io.py", line 12, in test_load
    data = load("missing.json")
FileNotFoundError: [Errno 2] No such file or directory: 'missing.json'

======================================================================
FAIL: test_add (tests.test_math.TestMath.test_add)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/home/dev/app/tests/test_math.py", line 8, in test_add
    self.assertEqual(add(1, 2), 4)
AssertionError: 3 != 4

----------------------------------------------------------------------
Ran 12 tests in 0.003s

FAILED (failures=1, errors=1)
"""


def test_unittest_failed() -> None:
    found = run(UNITTEST_FAILED)
    assert found == Run(10, 2, "unittest: 10 passed, 2 failed")
    assert found.fraction == pytest.approx(10 / 12)


def test_unittest_ok_with_skips_and_expected_failures() -> None:
    output = """\
............s
----------------------------------------------------------------------
Ran 13 tests in 0.004s

OK (skipped=1)
"""
    assert run(output) == Run(12, 0, "unittest: 12 passed, 0 failed")
    output = "Ran 1 test in 0.000s\n\nOK\n"
    assert run(output) == Run(1, 0, "unittest: 1 passed, 0 failed")
    output = (
        "Ran 10 tests in 0.010s\n\n"
        "FAILED (failures=1, skipped=2, expected failures=1, unexpected successes=1)\n"
    )
    assert run(output) == Run(5, 2, "unittest: 5 passed, 2 failed")


def test_django_test_runner_is_unittest() -> None:
    output = """\
Found 7 test(s).
Creating test database for alias 'default'...
System check identified no issues (0 silenced).
.......
----------------------------------------------------------------------
Ran 7 tests in 0.052s

OK
Destroying test database for alias 'default'...
"""
    assert run(output) == Run(7, 0, "unittest: 7 passed, 0 failed")


def test_unittest_without_tests_or_verdict_is_no_run() -> None:
    assert find_test_run("\nRan 0 tests in 0.000s\n\nNO TESTS RAN\n") is None
    assert find_test_run("Ran 12 tests in 0.003s\n") is None  # cut before the verdict
    assert find_test_run("Ran 3 tests in the staging cluster.\n\nOK\n") is None


# -- go test -----------------------------------------------------------------------

GO_PACKAGES = """\
ok  \tgithub.com/acme/shop/cart\t0.012s
--- FAIL: TestCheckout (0.00s)
    checkout_test.go:27: total = 90, want 100
FAIL
FAIL\tgithub.com/acme/shop/checkout\t0.015s
?   \tgithub.com/acme/shop/cmd/shop\t[no test files]
ok  \tgithub.com/acme/shop/inventory\t(cached)
ok  \tgithub.com/acme/shop/tax\t0.004s\tcoverage: 81.2% of statements
ok  \tgithub.com/acme/shop/util\t0.002s [no tests to run]
FAIL
"""

GO_VERBOSE = """\
=== RUN   TestAdd
--- PASS: TestAdd (0.00s)
=== RUN   TestParse
=== RUN   TestParse/empty
=== RUN   TestParse/negative
    parse_test.go:31: Parse("-1") = 1, want -1
--- FAIL: TestParse (0.00s)
    --- PASS: TestParse/empty (0.00s)
    --- FAIL: TestParse/negative (0.00s)
=== RUN   TestFormat
--- PASS: TestFormat (0.00s)
=== RUN   TestNetwork
    format_test.go:40: needs network
--- SKIP: TestNetwork (0.00s)
FAIL
FAIL\texample.com/calc\t0.004s
=== RUN   TestVersion
--- PASS: TestVersion (0.00s)
PASS
ok  \texample.com/calc/version\t0.002s
FAIL
"""


def test_go_test_without_v_counts_packages() -> None:
    found = run(GO_PACKAGES)
    assert found == Run(3, 1, "go test (packages): 3 passed, 1 failed")
    assert found.fraction == pytest.approx(0.75)


def test_go_test_v_counts_top_level_tests() -> None:
    assert run(GO_VERBOSE) == Run(3, 1, "go test: 3 passed, 1 failed")


def test_go_build_failure_is_a_failed_package() -> None:
    output = """\
# example.com/calc [example.com/calc.test]
./calc_test.go:9:2: undefined: Sub
FAIL\texample.com/calc [build failed]
ok  \texample.com/calc/version\t0.002s
FAIL
"""
    assert run(output) == Run(1, 1, "go test (packages): 1 passed, 1 failed")
    verbose = output.replace("ok  ", "=== RUN   TestVersion\n--- PASS: TestVersion (0.00s)\nok  ")
    assert run(verbose) == Run(1, 1, "go test: 1 passed, 1 failed")


def test_go_package_named_again_starts_another_run() -> None:
    output = """\
--- FAIL: TestAdd (0.00s)
    calc_test.go:9: Add(1, 2) = 4, want 3
FAIL
FAIL\texample.com/calc\t0.004s
FAIL
ok  \texample.com/calc\t0.003s
"""
    assert run(output) == Run(1, 0, "go test (packages): 1 passed, 0 failed")


# -- cargo test --------------------------------------------------------------------

CARGO_OK = """\
   Compiling calc v0.1.0 (/home/dev/calc)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.84s
     Running unittests src/lib.rs (target/debug/deps/calc-3f2a1b4c5d6e7f80)

running 28 tests
test parser::tests::empty ... ok
test parser::tests::slow ... ignored
test result: ok. 27 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s

     Running tests/cli.rs (target/debug/deps/cli-9a8b7c6d5e4f3a21)

running 3 tests
test version ... ok
test help ... ok
test unknown_flag ... ok

test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.12s

   Doc-tests calc

running 0 tests

test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

"""

CARGO_FAILED = """\
   Compiling calc v0.1.0 (/home/dev/calc)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.91s
     Running unittests src/lib.rs (target/debug/deps/calc-3f2a1b4c5d6e7f80)

running 4 tests
test tests::adds ... ok
test tests::divides_by_zero ... FAILED
test tests::formats ... ok
test tests::parses ... ok

failures:

---- tests::divides_by_zero stdout ----

thread 'tests::divides_by_zero' panicked at src/lib.rs:42:9:
attempt to divide by zero
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    tests::divides_by_zero

test result: FAILED. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass `--lib`
"""


def test_cargo_sums_the_blocks_of_one_run() -> None:
    found = run(CARGO_OK)
    assert found == Run(30, 0, "cargo test: 30 passed, 0 failed")
    assert found.fraction == 1.0


def test_cargo_failed_run() -> None:
    assert run(CARGO_FAILED) == Run(3, 1, "cargo test: 3 passed, 1 failed")


def test_cargo_second_run_after_finished_line() -> None:
    assert run(CARGO_FAILED + CARGO_OK) == Run(30, 0, "cargo test: 30 passed, 0 failed")
    # blocks with nothing between them (no Finished line) are one run
    blocks = [line for line in CARGO_OK.splitlines() if line.startswith("test result")]
    assert run("\n".join(blocks)) == Run(30, 0, "cargo test: 30 passed, 0 failed")


# -- jest, vitest ------------------------------------------------------------------

JEST = (
    "\x1b[0m\x1b[7m\x1b[1m\x1b[32m PASS \x1b[39m\x1b[22m\x1b[27m\x1b[0m \x1b[2msrc/\x1b[22m"
    "\x1b[1msum.test.js\x1b[22m\n"
    "\x1b[0m\x1b[7m\x1b[1m\x1b[31m FAIL \x1b[39m\x1b[22m\x1b[27m\x1b[0m \x1b[2msrc/\x1b[22m"
    "\x1b[1mcart.test.js\x1b[22m\n"
    "\x1b[1m\x1b[31m  \x1b[1m● \x1b[22m\x1b[1mcart \u203a applies the discount\x1b[39m\x1b[22m\n"
    "\n"
    "    \x1b[2mexpect(\x1b[22m\x1b[31mreceived\x1b[39m\x1b[2m).\x1b[22mtoBe\x1b[2m(\x1b[22m"
    "\x1b[32mexpected\x1b[39m\x1b[2m)\x1b[22m\n"
    "\n"
    "\x1b[1mTest Suites: \x1b[22m\x1b[1m\x1b[31m1 failed\x1b[39m\x1b[22m, "
    "\x1b[1m\x1b[32m2 passed\x1b[39m\x1b[22m, 3 total\n"
    "\x1b[1mTests:       \x1b[22m\x1b[1m\x1b[31m2 failed\x1b[39m\x1b[22m, "
    "\x1b[1m\x1b[33m1 skipped\x1b[39m\x1b[22m, \x1b[1m\x1b[32m10 passed\x1b[39m\x1b[22m, "
    "13 total\n"
    "\x1b[1mSnapshots:   \x1b[22m0 total\n"
    "\x1b[1mTime:\x1b[22m        1.482 s\n"
    "\x1b[2mRan all test suites\x1b[22m\x1b[2m.\x1b[22m\n"
)

VITEST = (
    " \x1b[31m\u276f\x1b[39m src/cart.test.ts \x1b[2m(\x1b[22m\x1b[2m5 tests\x1b[22m\x1b[2m | "
    "\x1b[22m\x1b[31m2 failed\x1b[39m\x1b[2m)\x1b[22m\x1b[33m 12\x1b[2mms\x1b[22m\x1b[39m\n"
    " \x1b[32m✓\x1b[39m src/sum.test.ts \x1b[2m(\x1b[22m\x1b[2m7 tests\x1b[22m\x1b[2m)"
    "\x1b[22m\x1b[2m 3\x1b[2mms\x1b[22m\x1b[39m\n"
    "\n"
    "\x1b[2m Test Files \x1b[22m \x1b[1m\x1b[31m1 failed\x1b[39m\x1b[22m\x1b[2m | \x1b[22m"
    "\x1b[1m\x1b[32m1 passed\x1b[39m\x1b[22m\x1b[90m (2)\x1b[39m\n"
    "\x1b[2m      Tests \x1b[22m \x1b[1m\x1b[31m2 failed\x1b[39m\x1b[22m\x1b[2m | \x1b[22m"
    "\x1b[1m\x1b[32m10 passed\x1b[39m\x1b[22m\x1b[2m | \x1b[22m\x1b[33m1 skipped\x1b[39m"
    "\x1b[90m (13)\x1b[39m\n"
    "\x1b[2m   Start at \x1b[22m 14:02:11\n"
    "\x1b[2m   Duration \x1b[22m 412ms\x1b[2m (transform 40ms, setup 0ms, collect 52ms, "
    "tests 15ms, environment 0ms, prepare 98ms)\x1b[22m\n"
)


def test_jest_in_colour() -> None:
    found = run(JEST)
    assert found == Run(10, 2, "jest: 10 passed, 2 failed")
    assert found.fraction == pytest.approx(10 / 12)


def test_jest_plain_and_all_passed() -> None:
    output = (
        "Test Suites: 3 passed, 3 total\nTests:       24 passed, 24 total\nSnapshots:   0 total\n"
    )
    assert run(output) == Run(24, 0, "jest: 24 passed, 0 failed")
    assert find_test_run("Test Suites: 1 failed, 1 total\nTests:       0 total\n") is None


def test_vitest_in_colour() -> None:
    assert run(VITEST) == Run(10, 2, "vitest: 10 passed, 2 failed")


def test_vitest_plain() -> None:
    output = " Test Files  4 passed (4)\n      Tests  2 failed | 10 passed (12)\n"
    assert run(output) == Run(10, 2, "vitest: 10 passed, 2 failed")
    assert find_test_run(" Test Files  no tests\n      Tests  no tests\n") is None


# -- mocha, rspec ------------------------------------------------------------------

MOCHA = """\

  Array
    #indexOf()
      ✔ should return -1 when the value is not present
      1) should return the index when present
      - should handle NaN


  10 passing (25ms)
  1 pending
  2 failing

  1) Array
       #indexOf()
         should return the index when present:

      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:

-1 !== 0

      at Context.<anonymous> (test/array.spec.js:12:14)
"""


def test_mocha() -> None:
    found = run(MOCHA)
    assert found == Run(10, 2, "mocha: 10 passed, 2 failed")
    assert found.fraction == pytest.approx(10 / 12)
    assert run("\n  3 passing (4ms)\n\n") == Run(3, 0, "mocha: 3 passed, 0 failed")
    assert run("\n  0 passing (1s)\n  2 failing\n") == Run(0, 2, "mocha: 0 passed, 2 failed")
    assert find_test_run("\n  0 passing (2ms)\n") is None


RSPEC = """\
..F*.........

Pending: (Failures listed here are expected and do not affect your suite's status)

  1) Cart applies coupons
     # Not yet implemented
     # ./spec/cart_spec.rb:20

Failures:

  1) Cart totals the items
     Failure/Error: expect(cart.total).to eq(100)

       expected: 100
            got: 90

       (compared using ==)
     # ./spec/cart_spec.rb:12:in `block (2 levels) in <top (required)>'

Finished in 0.02315 seconds (files took 0.14 seconds to load)
13 examples, 1 failure, 1 pending

Failed examples:

rspec ./spec/cart_spec.rb:10 # Cart totals the items
"""


def test_rspec_with_pending() -> None:
    found = run(RSPEC)
    assert found == Run(11, 1, "rspec: 11 passed, 1 failed")
    assert found.fraction == pytest.approx(11 / 12)


def test_rspec_all_passed_and_load_error() -> None:
    output = "Finished in 0.001 seconds (files took 0.1 seconds to load)\n1 example, 0 failures\n"
    assert run(output) == Run(1, 0, "rspec: 1 passed, 0 failed")
    output = "0 examples, 0 failures, 1 error occurred outside of examples\n"
    assert run(output) == Run(0, 1, "rspec: 0 passed, 1 failed")


# -- generic, mixed, negatives ------------------------------------------------------


def test_generic_shape_only_without_a_runner() -> None:
    assert run("Summary: 8 passed, 1 failed\n") == Run(8, 1, "tests: 8 passed, 1 failed")
    assert run("results - 3 failed, 9 passed.") == Run(9, 3, "tests: 9 passed, 3 failed")
    assert run("12 tests passed, 0 tests failed") == Run(12, 0, "tests: 12 passed, 0 failed")
    # a runner's summary wins over a later generic line
    output = "======= 2 failed, 5 passed in 0.30s =======\nCI summary: 7 passed, 0 failed\n"
    assert run(output) == Run(5, 2, "pytest: 5 passed, 2 failed")


def test_the_last_runner_wins_across_runners() -> None:
    assert run(PYTEST_FAILED + JEST).source == "jest: 10 passed, 2 failed"
    assert run(JEST + PYTEST_FAILED).source == "pytest: 42 passed, 2 failed"
    assert run(CARGO_OK + GO_PACKAGES).source == "go test (packages): 3 passed, 1 failed"
    assert run(GO_VERBOSE + UNITTEST_FAILED).source == "unittest: 10 passed, 2 failed"
    assert run(MOCHA + RSPEC).source == "rspec: 11 passed, 1 failed"
    assert run(RSPEC + VITEST).source == "vitest: 10 passed, 2 failed"


@pytest.mark.parametrize(
    "output",
    [
        "",
        "2 failed attempts to connect to db.internal:5432, retrying in 3s",
        "Error: 3 failed login attempts\nwarning: 2 passed deprecation checks",
        "Build passed in 12s",
        "deploy: 2 failed in 3.5 seconds (see log)",
        "Ran the migration in 2.1s\n\nOK",
        "    --- FAIL: this is markdown, not go\n",
        "Tests: pending\n",
        "Tests  are flaky (3)\n",
        "see test result: ok. in the docs",
        "commit 1a2b3c: fix 2 failed tests, 3 passed reviews",  # no N passed, N failed shape
        "xyz12 passed, 3 failed",
        "=" * 80,
        "\x1b[31mFAILED\x1b[0m",
        "$ ls\nREADME.md  pyproject.toml  src  tests\n",
    ],
)
def test_not_a_test_run(output: str) -> None:
    assert find_test_run(output) is None


@given(st.text(alphabet=" \n\t=.,|():0123456789abcdefilnoprstuvxyzFAILOKPSR-\x1b[m", max_size=300))
def test_any_text_gives_none_or_a_sane_run(output: str) -> None:
    found = find_test_run(output)
    if found is not None:
        assert found.passed >= 0 and found.failed >= 0
        assert found.passed + found.failed > 0
        assert 0.0 <= found.fraction <= 1.0
        assert found.source.endswith(f": {found.passed} passed, {found.failed} failed")


# -- speed -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "filler",
    [
        "tests/test_mod.py::test_case[param-17] PASSED                            [ 42%]\n",
        "2024-05-01 12:00:00 INFO worker 3 in 0.12s: 5 items passed, retrying\n",
        "1 passed, 1 passed, 1 failed, 1 failed, " * 2 + "\n",
        "1 a, 2 b, 3 c, 4 d, 5 e, 6 f, 7 g, 8 h, 9 i, 10 j, 11 k in 1.0s x\n",
        "Tests:       1 a, 2 b, 3 c, 4 d, 5 e, 6 f, 7 g, 8 h, 9 i, 10 j x\n",
        "      Tests  1 a | 2 b | 3 c | 4 d | 5 e | 6 f | 7 g | 8 h x\n",
        "--- PASS: TestSomething/with_a_case (0.00s)\n=== RUN   TestOther\n",
        "Ran 12 tests in 0.003s\n\n\n\n",
        "\x1b[1m\x1b[32m ok \x1b[39m\x1b[22m " * 3 + "\n",
        "x" * 5000 + "\n",
        # one long line: nothing may read back to its start once a match
        "test result: ok. 1 passed; 0 failed; --- PASS: TestX (0.00s) 1 passed in 1s ",
        "Tests:       1 passed, 1 total  1 passing (1ms) 1 example, 0 failures ",
        " " * 999 + "--- FAIL: TestX (",
    ],
    ids=[
        "pytest-v",
        "log",
        "generic-shape",
        "pytest-words",
        "jest-words",
        "vitest-words",
        "go-v",
        "unittest",
        "ansi",
        "long-lines",
        "one-line-a",
        "one-line-b",
        "indent",
    ],
)
def test_a_megabyte_of_look_alike_lines_still_ends_in_its_summary(filler: str) -> None:
    # Their speed is measured by benchmarks/bench_sessions.py; here, that the patterns
    # built to stay linear on such lines still read the summary after them.
    output = filler * (1_000_000 // len(filler)) + "\n=== 9 passed, 1 failed in 0.50s ===\n"
    found = find_test_run(output)
    assert found is not None and found.source == "pytest: 9 passed, 1 failed"
