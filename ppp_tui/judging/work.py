"""Judging a database's questions and unscored agents, and evaluating the judge.

Each distinct prompt is one request (questions with the same text and task share it);
what the cache holds for (model, prompt version, input hash) is used without a request,
unless `refresh`. The prompts to send are claimed first (judge_claims.py): one that
another run is asking at the same time is left to it and counted. Requests run
`concurrency` at a time in threads; this thread alone writes, `BATCH` judgments per
transaction, so a failure keeps every judgment received before it and a later run
continues from there. An answer that is not a label (or a score) leaves the question's
classified effort (or the agent unscored) and is counted; one cut off at max_tokens is
not cached either, and a prompt longer than the model's context is skipped and counted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core.effort import classify_effort
from ..core.evaluation import Evaluation, evaluate
from ..core.judge import (
    Prompt,
    effort_prompt,
    estimated_tokens,
    parse_effort,
    parse_score,
    technical_prompt,
)
from ..core.model import Effort
from ..core.settings import JudgeSettings
from ..storage import judge_claims as claims
from ..storage import judgments as stored
from ..storage.database import StoreError, now
from .client import Answer, Client, JudgeError, Stopped, TooLong

if TYPE_CHECKING:
    from ..storage.store import Store

BATCH = 25  # judgments written per transaction
MAX_ANSWER_CHARS = 2000  # of an answer kept in the cache
EFFORT_ANSWER_TOKENS = 4
TECHNICAL_ANSWER_TOKENS = 6

Progress = Callable[[int], None]


@dataclass
class Tally:
    """What became of the questions (or agents) in scope."""

    total: int = 0  # in scope
    cached: int = 0  # answered from the cache
    requests: int = 0  # distinct prompts sent (or, in a dry run, to send) for them
    judged: int = 0  # given a label (or score) by the judge, from the cache or a request
    changed: int = 0  # whose effort (or technical score) the judgment changed
    unparseable: int = 0  # whose answer was no label (no score): left as they were
    cut_off: int = 0  # of those, whose answer was cut off at max_tokens (never cached)
    too_long: int = 0  # whose prompt is longer than the model's context: skipped
    taken: int = 0  # another run was asking their prompt at the same time: left to it
    no_output: int = 0  # agents with no output to judge (technical only)

    def document(self) -> dict[str, int]:
        return {
            "total": self.total,
            "cached": self.cached,
            "requests": self.requests,
            "judged": self.judged,
            "changed": self.changed,
            "unparseable": self.unparseable,
            "cut_off": self.cut_off,
            "too_long": self.too_long,
            "taken": self.taken,
        }


@dataclass
class _Task:
    """One distinct prompt and what its answer is for."""

    prompt: Prompt
    questions: list[stored.QuestionRow] = field(default_factory=list)
    agents: list[stored.AgentRow] = field(default_factory=list)
    answer: str | None = None  # None: no usable answer (none came, or it was cut off)
    cached: bool = False
    kept: str = ""  # the answer as the cache keeps it: cut short, secrets hidden

    @property
    def size(self) -> int:
        """The questions (or agents) this prompt is for."""
        return len(self.questions) or len(self.agents)

    def tally(self, report: Report) -> Tally:
        return report.questions if self.questions else report.technical or Tally()


@dataclass
class Report:
    requests: int = 0  # sent (or, in a dry run, to send)
    estimated_tokens: int = 0  # of those requests
    questions: Tally = field(default_factory=Tally)
    technical: Tally | None = None  # None: --technical not asked for


@dataclass(frozen=True)
class EvaluationReport:
    questions: int
    requests: int
    answered: int  # questions whose answer gave an effort
    unparseable: int  # the others: no usable answer
    judge: Evaluation | None  # on the answered questions (None: none)
    classifier_on_answered: Evaluation | None  # the classifier on the same questions
    judge_or_classifier: Evaluation  # on all: no answer counts as the classifier's label
    classifier: Evaluation  # on all


def _effort_tasks(rows: Sequence[stored.QuestionRow]) -> dict[str, _Task]:
    tasks: dict[str, _Task] = {}
    for row in rows:
        prompt = effort_prompt(row.text, row.task)
        tasks.setdefault(prompt.input_hash, _Task(prompt)).questions.append(row)
    return tasks


def _technical_tasks(rows: Sequence[stored.AgentRow], tally: Tally) -> dict[str, _Task]:
    tasks: dict[str, _Task] = {}
    for row in rows:
        if not row.output or not row.output.strip():
            tally.no_output += 1
            continue
        prompt = technical_prompt(row.task, row.output)
        tasks.setdefault(prompt.input_hash, _Task(prompt)).agents.append(row)
    return tasks


class Judging:
    """The judge's work on one store, with one endpoint and model."""

    def __init__(
        self,
        store: Store,
        judge: JudgeSettings,
        refresh: bool = False,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.judge = judge
        self.refresh = refresh
        self.warn = warn
        self.owner = claims.Owner.this_run()
        self.started = now()
        self.pending: list[stored.Judgment] = []
        self.efforts: list[tuple[int, int, Effort, str, str]] = []
        self.scores: list[tuple[int, float, str]] = []
        self.cache_only = False  # evaluating: answers go to the cache, nothing else

    # -- the plan --------------------------------------------------------------------

    def _look_up(self, tasks: dict[str, _Task], version: str) -> list[_Task]:
        """Fill in the cached answers; the tasks that need a request."""
        if not self.refresh:
            found = stored.cached(self.store, self.judge.model, version, tasks)
            for input_hash, hit in found.items():
                tasks[input_hash].answer = hit.answer
                tasks[input_hash].cached = True
        return [task for task in tasks.values() if not task.cached]

    # -- judging ---------------------------------------------------------------------

    def run(
        self,
        questions: Sequence[stored.QuestionRow],
        agents: Sequence[stored.AgentRow] | None,
        dry_run: bool = False,
        progress: Callable[[int], Callable[[int], None] | None] | None = None,
    ) -> Report:
        """Judge the efforts of `questions` and, unless None, the technical scores of
        `agents`; with `dry_run`, only count the requests it would take."""
        report = Report(questions=Tally(total=len(questions)))
        effort_tasks = _effort_tasks(questions)
        if effort_tasks:
            version = next(iter(effort_tasks.values())).prompt.version
            to_send = self._look_up(effort_tasks, version)
        else:
            to_send = []
        report.questions.requests = len(to_send)
        report.questions.cached = sum(len(t.questions) for t in effort_tasks.values() if t.cached)
        technical_tasks: dict[str, _Task] = {}
        if agents is not None:
            report.technical = Tally(total=len(agents))
            technical_tasks = _technical_tasks(agents, report.technical)
            if technical_tasks:
                version = next(iter(technical_tasks.values())).prompt.version
                sent = self._look_up(technical_tasks, version)
                report.technical.requests = len(sent)
                report.technical.cached = sum(
                    len(t.agents) for t in technical_tasks.values() if t.cached
                )
                to_send += sent
        report.requests = len(to_send)
        report.estimated_tokens = sum(
            estimated_tokens(
                task.prompt,
                EFFORT_ANSWER_TOKENS if task.questions else TECHNICAL_ANSWER_TOKENS,
            )
            for task in to_send
        )
        if dry_run:
            return report
        # What the cache answers is written first, then each answer as it comes.
        for task in [*effort_tasks.values(), *technical_tasks.values()]:
            if task.cached:
                self._apply(task, report)
        self._flush()
        self._send(to_send, report, progress)
        return report

    def _send(
        self,
        tasks: Sequence[_Task],
        report: Report,
        progress: Callable[[int], Callable[[int], None] | None] | None,
    ) -> None:
        """Claim `tasks`, ask for those this run now holds, and note each answer."""
        if not tasks:
            return
        mine = self._claim(tasks, report)
        step = progress(len(mine)) if progress is not None and mine else None
        try:
            if mine:
                self._ask_all(mine, report, step)
        except BaseException:
            # Unreleased claims lapse on their own: a dead process's at once.
            with suppress(StoreError):
                claims.release(self.store, self.owner)
            raise
        claims.release(self.store, self.owner)

    def _claim(self, tasks: Sequence[_Task], report: Report) -> list[_Task]:
        """The tasks this run is to send: the others were answered meanwhile (read from
        the cache) or are being asked by another run (left to it)."""
        groups: dict[str, dict[str, _Task]] = {}
        for task in tasks:
            groups.setdefault(task.prompt.version, {})[task.prompt.input_hash] = task
        mine: list[_Task] = []
        for version, group in groups.items():
            since = self.started if self.refresh else None
            got = claims.claim(
                self.store, self.owner, self.judge.model, version, list(group), since
            )
            for input_hash, hit in got.answered.items():
                task = group[input_hash]
                task.answer, task.cached = hit.answer, True
                self._not_sent(task, report).cached += task.size
                self._apply(task, report)
            for input_hash in got.taken:
                self._not_sent(group[input_hash], report).taken += group[input_hash].size
            mine += [group[input_hash] for input_hash in got.mine]
        self._flush()
        return mine

    @staticmethod
    def _not_sent(task: _Task, report: Report) -> Tally:
        """Count `task` out of the requests; its tally."""
        tally = task.tally(report)
        tally.requests -= 1
        report.requests -= 1
        return tally

    def _ask_all(self, tasks: Sequence[_Task], report: Report, step: Progress | None) -> None:
        failure: BaseException | None = None
        with Client(self.judge, warn=self.warn) as client:
            client.check_model()
            pool = ThreadPoolExecutor(max_workers=self.judge.concurrency)
            try:
                pending: dict[Future[Answer], _Task] = {
                    pool.submit(client.ask, task.prompt): task for task in tasks
                }
                beat = time.monotonic()
                while pending:
                    done, _ = wait(pending, timeout=claims.HEARTBEAT_S, return_when=FIRST_COMPLETED)
                    for future in done:
                        task = pending.pop(future)
                        try:
                            self._take(task, future.result(), client, report)
                        except Stopped:
                            continue
                        except TooLong:
                            task.tally(report).too_long += task.size
                        except JudgeError as error:
                            # The first failure stops the others; what came before stays.
                            failure = failure or error
                            client.stop.set()
                            continue
                        if step is not None:
                            step(1)
                        if len(self.pending) >= BATCH:
                            self._flush()
                    if time.monotonic() - beat >= claims.HEARTBEAT_S:
                        claims.refresh(self.store, self.owner)
                        beat = time.monotonic()
            except BaseException:  # ctrl+c, or a database error: keep what came
                client.stop.set()
                pool.shutdown(wait=False, cancel_futures=True)
                self._flush()
                raise
            pool.shutdown(wait=True)
        self._flush()
        if failure is not None:
            raise failure

    def _take(self, task: _Task, answer: Answer, client: Client, report: Report) -> None:
        """Note an answer received: one cut off at max_tokens counts as none."""
        if answer.cut_off:
            task.tally(report).cut_off += task.size
            task.answer = None
        else:
            task.answer = answer.text
            head = answer.text[: MAX_ANSWER_CHARS + client.secrets.longest]
            task.kept = client.secrets.mask(head)[:MAX_ANSWER_CHARS]
        self._apply(task, report)

    def _apply(self, task: _Task, report: Report) -> None:
        """Note what `task`'s answer says, for the next write."""
        answer = task.answer or ""
        model, version = self.judge.model, task.prompt.version
        if task.questions:
            label = parse_effort(answer)
            tally = report.questions
            for question in [] if self.cache_only else task.questions:
                if label is None:
                    tally.unparseable += 1
                    continue
                tally.judged += 1
                tally.changed += label is not question.effort
                self.efforts.append((question.id, question.trajectory_id, label, model, version))
            judgment = stored.Judgment(
                model,
                version,
                task.prompt.input_hash,
                task.kept,
                label=label.value if label else None,
            )
        else:
            score = parse_score(answer)
            tally = report.technical or Tally()
            for agent in task.agents:
                if score is None:
                    tally.unparseable += 1
                    continue
                tally.judged += 1
                tally.changed += 1
                self.scores.append((agent.id, score, model))
            judgment = stored.Judgment(
                model, version, task.prompt.input_hash, task.kept, score=score
            )
        if not task.cached and task.answer is not None:
            self.pending.append(judgment)

    def _flush(self) -> None:
        if self.pending or self.efforts or self.scores:
            stored.save(self.store, self.pending, self.efforts, self.scores)
        self.pending, self.efforts, self.scores = [], [], []

    # -- evaluating ------------------------------------------------------------------

    def evaluate(
        self,
        questions: Sequence[stored.QuestionRow],
        dry_run: bool = False,
        progress: Callable[[int], Callable[[int], None] | None] | None = None,
    ) -> tuple[Report, EvaluationReport | None]:
        """Judge labelled questions (their labels untouched; the answers cached) and
        score the judge and the rule classifier against the labels."""
        report = Report(questions=Tally(total=len(questions)))
        tasks = _effort_tasks(questions)
        to_send = self._look_up(tasks, next(iter(tasks.values())).prompt.version) if tasks else []
        report.requests = report.questions.requests = len(to_send)
        report.questions.cached = sum(len(t.questions) for t in tasks.values() if t.cached)
        report.estimated_tokens = sum(
            estimated_tokens(task.prompt, EFFORT_ANSWER_TOKENS) for task in to_send
        )
        if dry_run or not questions:
            return report, None
        # The labelled questions are never written: only the answers, to the cache.
        self.cache_only = True
        self._send(to_send, report, progress)
        expected: list[Effort] = []
        judged: list[Effort] = []
        classified: list[Effort] = []
        answered: list[int] = []  # indexes of the questions the judge gave an effort
        for task in tasks.values():
            label = parse_effort(task.answer or "")
            for question in task.questions:
                rule = classify_effort(question.text, question.task)
                if label is not None:
                    answered.append(len(expected))
                expected.append(question.effort)
                classified.append(rule)
                judged.append(label or rule)

        def on_answered(labels: list[Effort]) -> Evaluation | None:
            if not answered:
                return None
            return evaluate([expected[i] for i in answered], [labels[i] for i in answered])

        return report, EvaluationReport(
            questions=len(questions),
            requests=report.requests,
            answered=len(answered),
            unparseable=len(questions) - len(answered),
            judge=on_answered(judged),
            classifier_on_answered=on_answered(classified),
            judge_or_classifier=evaluate(expected, judged),
            classifier=evaluate(expected, classified),
        )
