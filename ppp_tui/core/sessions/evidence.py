"""Test evidence: the last test run summarised in one tool output.

`find_test_run` reads the text of one tool output (a shell command's output in a coding
agent's session) and returns the last test run summarised in it, or None. Runners and
the lines read from each, as the runner prints them (ANSI colour codes are stripped
first, and a lone carriage return ends a line):

- pytest: the stats line, with or without the `=` rule of `-q`:
  ``==== 2 failed, 41 passed, 1 skipped in 3.21s ====``, ``41 passed in 0.52s``,
  ``1 error in 0.12s`` (older pytest: ``in 3.21 seconds``). Errors count as failed;
  skipped, xfailed, xpassed, deselected, warnings and plugins' words (rerun, subtests
  passed) are not counted. ``--collect-only`` lines (``12 tests collected``) are no run.
- unittest: ``Ran 12 tests in 0.003s``, blank lines, then ``OK``, ``OK (skipped=1)``
  or ``FAILED (failures=2, errors=1)``. Failed = failures + errors + unexpected
  successes (they make the run FAILED); passed = ran - failed - skipped - expected
  failures.
- go test: the package lines ``ok  \tpkg\t0.01s`` and ``FAIL\tpkg\t0.02s`` (also
  ``FAIL\tpkg [build failed]``) and, with ``-v``, ``--- PASS: TestX (0.00s)`` /
  ``--- FAIL: TestX (0.00s)``. A run printed with ``-v`` (it holds ``=== RUN`` lines)
  counts top-level tests (subtests, indented and named ``TestX/case``, are not counted;
  a failing subtest fails its parent), and a failed package with no failed test in it
  (a build failure, a panic in TestMain) counts as one failed test. Without ``-v`` it
  counts packages: ok ones passed, FAIL ones failed; a package ``[no tests to run]`` is
  not counted. The source then reads ``go test (packages): ...``.
- cargo test: ``test result: ok. 30 passed; 0 failed; 1 ignored; ...``, one per test
  binary and doc-tests; the blocks of one run are summed. cargo's ``Finished ...
  target(s) in`` line between two blocks starts another run.
- jest: ``Tests:       2 failed, 1 skipped, 10 passed, 13 total``.
- vitest: ``      Tests  2 failed | 10 passed | 1 skipped (13)``.
- mocha: ``  10 passing (25ms)``, then ``  1 pending`` and ``  2 failing`` lines.
- rspec: ``12 examples, 2 failures, 1 pending``; passed = examples - failures - pending,
  and ``, 1 error occurred outside of examples`` adds failed ones.
- anything else: ``N passed, N failed`` (or ``N failed, N passed``, ``N tests passed``)
  anywhere in a line; used only when no runner above summarised a run in the output.

Only the last summary counts: with two pytest runs, the second. A cargo or go run is the
group of its result lines that ends the output (several blocks or packages); a package
named twice starts another go run. A summary of no test (``no tests ran``, ``Tests:
0 total``, every test skipped) is no test run: it is passed over, and the run before it
counts. The source line is ``<runner>: <passed> passed, <failed> failed``, the runner
being ``pytest``, ``unittest``, ``go test``, ``go test (packages)``, ``cargo test``,
``jest``, ``vitest``, ``mocha``, ``rspec`` or ``tests`` (the generic form).

Speed: every pattern starts with a literal or a digit (so the regex engine skips ahead
fast), none can backtrack badly, and each runs only when a cheap substring test says
its runner may be in the text; nothing reads back over a long line more than once. A
1 MB output takes milliseconds (some 0.15 s at worst, when every line is a summary).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from .model import TestRun

# CSI (7-bit and 8-bit), OSC (ended by BEL or ST) and the other two-byte escapes.
_ANSI = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]"
)

# pytest: found by its duration, then the whole line is read.
_PYTEST_HINT = re.compile(r" in \d+(?:\.\d+)?(?:s| seconds)")
_PYTEST_LINE = re.compile(
    r"[ \t]*(?:=+ )?"
    r"(\d+ [a-z]+(?: [a-z]+)?(?:, \d+ [a-z]+(?: [a-z]+)?)*)"
    r" in \d+(?:\.\d+)?(?:s| seconds)(?: \([^()\n]*\))?(?: =+)?[ \t]*"
)
_COUNT_WORD = re.compile(r"(\d+) ([a-z]+(?: [a-z]+)?)")

_UNITTEST = re.compile(
    r"Ran (\d+) tests? in \d+(?:\.\d+)?s[ \t]*\n(?:[ \t]*\n)*"
    r"(OK|FAILED|NO TESTS RAN)(?: \(([^()\n]*)\))?"
)
_UNITTEST_INFO = re.compile(r"([a-z][a-z ]*)=(\d+)")

_GO_PACKAGE = re.compile(r"(ok  |FAIL)\t([^\s\[]+)([^\n]*)")
_GO_TEST = re.compile(r"--- (PASS|FAIL): (\S+) \(")

_CARGO = re.compile(r"test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed;")
_CARGO_FINISHED = re.compile(r"Finished [^\n]*?target\(s\) in ")

_JEST = re.compile(r"Tests:[ \t]+((?:\d+ [a-z]+, )*)(?:\d+ of )?\d+ total")
_VITEST = re.compile(r"Tests[ \t]+(\d+ [a-z]+(?: [a-z]+)?(?: \| \d+ [a-z]+(?: [a-z]+)?)*) \(\d+\)")

_MOCHA = re.compile(
    r"(\d+) passing \([^()\n]*\)[ \t]*"
    r"(?:\n[ \t]*(\d+) pending[ \t]*)?(?:\n[ \t]*(\d+) failing\b)?"
)
_RSPEC = re.compile(
    r"(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?"
    r"(?:, (\d+) errors? occurred outside of examples)?"
)

_GENERIC = re.compile(
    r"(\d+) (?:tests? )?(passed|failed), (\d+) (?:tests? )?(passed|failed)(?![\w-])"
)


class _Event(NamedTuple):
    """One summary line (or part of one run, for cargo and go), by position."""

    start: int
    end: int
    kind: str  # a runner's name, "cargo-split", "go-package" or "go-test"
    passed: int = 0
    failed: int = 0
    name: str = ""  # go: the package or test
    top: bool = True  # go: a top-level test (not a subtest)


def find_test_run(output: str) -> TestRun | None:
    """The last test run summarised in one tool output, or None."""
    text = _clean(output)
    try:
        events = sorted(_events(text))
    except ValueError:  # a count longer than Python reads (4,300 digits): no test run
        return None
    i = len(events) - 1
    while i >= 0:
        kind = events[i].kind
        if kind == "cargo-split":
            i -= 1
            continue
        if kind == "cargo test":
            run, i = _cargo_run(events, i)
        elif kind in ("go-package", "go-test"):
            run, i = _go_run(events, i, text)
        else:
            event = events[i]
            run, i = _run(kind, event.passed, event.failed), i - 1
        if run is not None:
            return run
    return _generic(text)


def _clean(output: str) -> str:
    if "\x1b" in output or "\x9b" in output:
        output = _ANSI.sub("", output)
    if "\r" in output:
        output = output.replace("\r\n", "\n").replace("\r", "\n")
    return output


def _run(runner: str, passed: int, failed: int) -> TestRun | None:
    if passed < 0:
        passed = 0
    if passed + failed <= 0:
        return None
    return TestRun(passed, failed, f"{runner}: {passed} passed, {failed} failed")


def _indent(text: str, pos: int) -> int | None:
    """How many spaces and tabs stand between pos and the start of its line; None when
    anything else does. It reads back only over those (a long line costs nothing)."""
    i = pos
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    if i > 0 and text[i - 1] != "\n":
        return None
    return pos - i


def _indent_only(text: str, pos: int) -> bool:
    """Whether only spaces and tabs stand between pos and the start of its line."""
    return _indent(text, pos) is not None


def _events(text: str) -> Iterator[_Event]:
    yield from _pytest(text)
    yield from _unittest(text)
    yield from _go(text)
    yield from _cargo(text)
    yield from _jest(text)
    yield from _vitest(text)
    yield from _mocha(text)
    yield from _rspec(text)


def _pytest(text: str) -> Iterator[_Event]:
    if "passed" not in text and "failed" not in text and " error" not in text:
        return
    end = -1
    for hint in _PYTEST_HINT.finditer(text):
        if hint.start() < end:
            continue  # a line already read
        start = text.rfind("\n", 0, hint.start()) + 1
        end = text.find("\n", hint.end())
        if end < 0:
            end = len(text)
        match = _PYTEST_LINE.fullmatch(text, start, end)
        if match is None:
            continue
        passed = failed = 0
        for count, word in _COUNT_WORD.findall(match.group(1)):
            if word == "passed":
                passed += int(count)
            elif word in ("failed", "error", "errors"):
                failed += int(count)
            elif word.endswith("collected"):
                passed = failed = 0
                break
        if passed or failed:
            yield _Event(start, end, "pytest", passed, failed)


def _unittest(text: str) -> Iterator[_Event]:
    if "Ran " not in text:
        return
    for match in _UNITTEST.finditer(text):
        if not _indent_only(text, match.start()):
            continue
        info = {k.strip(): int(v) for k, v in _UNITTEST_INFO.findall(match.group(3) or "")}
        failed = info.get("failures", 0) + info.get("errors", 0)
        failed += info.get("unexpected successes", 0)
        not_passed = failed + info.get("skipped", 0) + info.get("expected failures", 0)
        passed = max(int(match.group(1)) - not_passed, 0)
        if passed or failed:
            yield _Event(match.start(), match.end(), "unittest", passed, failed)


def _go(text: str) -> Iterator[_Event]:
    if "ok  \t" in text or "FAIL\t" in text:
        for match in _GO_PACKAGE.finditer(text):
            start = match.start()
            if start and text[start - 1] != "\n":
                continue
            ok = match.group(1) == "ok  "
            passed = int(ok and "[no tests to run]" not in match.group(3))
            yield _Event(start, match.end(), "go-package", passed, 0 if ok else 1, match.group(2))
    if "--- PASS: " in text or "--- FAIL: " in text:
        for match in _GO_TEST.finditer(text):
            start = match.start()
            indent = _indent(text, start)
            if indent is None:
                continue
            name = match.group(2)
            top = indent == 0 and "/" not in name
            passed = 1 if match.group(1) == "PASS" else 0
            yield _Event(start, match.end(), "go-test", passed, 1 - passed, name, top)


def _cargo(text: str) -> Iterator[_Event]:
    if "test result: " not in text:
        return
    for match in _CARGO.finditer(text):
        if _indent_only(text, match.start()):
            passed, failed = int(match.group(1)), int(match.group(2))
            yield _Event(match.start(), match.end(), "cargo test", passed, failed)
    if "Finished " in text:
        for match in _CARGO_FINISHED.finditer(text):
            if _indent_only(text, match.start()):
                yield _Event(match.start(), match.end(), "cargo-split")


def _counts(body: str) -> tuple[int, int]:
    passed = failed = 0
    for count, word in _COUNT_WORD.findall(body):
        if word == "passed":
            passed += int(count)
        elif word == "failed":
            failed += int(count)
    return passed, failed


def _jest(text: str) -> Iterator[_Event]:
    if "Tests:" not in text:
        return
    for match in _JEST.finditer(text):
        if _indent_only(text, match.start()):
            passed, failed = _counts(match.group(1))
            if passed or failed:
                yield _Event(match.start(), match.end(), "jest", passed, failed)


def _vitest(text: str) -> Iterator[_Event]:
    if "Tests " not in text and "Tests\t" not in text:
        return
    for match in _VITEST.finditer(text):
        if _indent_only(text, match.start()):
            passed, failed = _counts(match.group(1))
            if passed or failed:
                yield _Event(match.start(), match.end(), "vitest", passed, failed)


def _mocha(text: str) -> Iterator[_Event]:
    if " passing (" not in text:
        return
    for match in _MOCHA.finditer(text):
        start = match.start()
        if not _indent_only(text, start):
            continue
        passed, failed = int(match.group(1)), int(match.group(3) or 0)
        if passed or failed:
            yield _Event(start, match.end(), "mocha", passed, failed)


def _rspec(text: str) -> Iterator[_Event]:
    if " example" not in text:
        return
    for match in _RSPEC.finditer(text):
        start = match.start()
        if not _indent_only(text, start):
            continue
        examples, failures = int(match.group(1)), int(match.group(2))
        pending, errors = int(match.group(3) or 0), int(match.group(4) or 0)
        passed, failed = examples - failures - pending, failures + errors
        if passed > 0 or failed:
            yield _Event(start, match.end(), "rspec", max(passed, 0), failed)


def _cargo_run(events: list[_Event], i: int) -> tuple[TestRun | None, int]:
    """The cargo run whose last block is events[i], and the index before it."""
    passed = failed = 0
    while i >= 0 and events[i].kind == "cargo test":
        passed += events[i].passed
        failed += events[i].failed
        i -= 1
    return _run("cargo test", passed, failed), i


def _go_run(events: list[_Event], i: int, text: str) -> tuple[TestRun | None, int]:
    """The go test run whose last line is events[i], and the index before it."""
    last = i
    packages: set[str] = set()
    while i >= 0 and events[i].kind in ("go-package", "go-test"):
        if events[i].kind == "go-package":
            if events[i].name in packages:
                break
            packages.add(events[i].name)
        i -= 1
    group = events[i + 1 : last + 1]
    begin = events[i].end if i >= 0 else 0
    if "=== RUN" not in text[begin : events[last].end]:
        passed = sum(e.passed for e in group if e.kind == "go-package")
        failed = sum(e.failed for e in group if e.kind == "go-package")
        return _run("go test (packages)", passed, failed), i
    passed = failed = failed_here = 0
    for event in group:
        if event.kind == "go-test":
            if event.top:
                passed += event.passed
                failed_here += event.failed
        else:
            failed += max(failed_here, event.failed)
            failed_here = 0
    return _run("go test", passed, failed + failed_here), i


def _generic(text: str) -> TestRun | None:
    if "passed, " not in text and "failed, " not in text:
        return None
    found: TestRun | None = None
    for match in _GENERIC.finditer(text):
        start = match.start()
        if start and (text[start - 1].isalnum() or text[start - 1] in "._-"):
            continue
        if match.group(2) == match.group(4):
            continue
        first, second = int(match.group(1)), int(match.group(3))
        passed, failed = (first, second) if match.group(2) == "passed" else (second, first)
        run = _run("tests", passed, failed)
        if run is not None:
            found = run
    return found
