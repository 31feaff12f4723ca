"""What an LLM judge is asked and how its answers are read (docs/judge.md).

Two prompts: the effort of a question an agent put to the user, with the run's task
text as context (the definitions are the classifier's, docs/effort.md, after the PPP
paper), and a technical score from 0 to 1 for an agent no test run scored, from the task
and the agent's final output. Each has a version: a judgment is kept by (model, prompt
version, hash of the prompt's input), so changing a prompt's words means a new version.
Answers are read tolerantly (case, punctuation, a reasoning model's <think> block); an
answer that says none (or more than one) of the labels is unparseable, never guessed.
No I/O here: the requests are sent by `ppp_tui.judging`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from .model import Effort

EFFORT_PROMPT_VERSION = "effort-1"
TECHNICAL_PROMPT_VERSION = "technical-1"

# The longest task or output text a prompt carries (characters): the head and the tail
# are kept, as those say what was asked and how it ended.
MAX_CONTEXT_CHARS = 12_000

Messages = tuple[tuple[str, str], ...]  # (role, content) in order

EFFORT_SYSTEM = """\
You judge how much effort it costs a user to answer a question that an AI coding agent \
asked them while working on a task. The user knows the whole task text shown to you.

LOW: the user answers at once: the answer is already in the task text, or the question \
offers options to pick from, or asks a yes/no confirmation of what the agent is about \
to do.
MEDIUM: the user cannot or would not answer at once: they have to decide something \
open-ended without research (a name, a value, a preference nobody offered options for).
HIGH: answering needs information beyond the task text: the user has to investigate, \
run or measure something, look at production or their own machine, dig up logs or \
credentials, explain at length, or settle a broad architecture or strategy question."""

EFFORT_INSTRUCTION = (
    "Classify the effort required to answer this question. "
    "Output ONLY one word: LOW, MEDIUM, or HIGH"
)

TECHNICAL_SYSTEM = """\
You grade the work of an AI coding agent. You see the task it was given and its final \
answer. No tests were run. Judge how completely and correctly the answer accomplishes \
the task: 1 means fully done and correct, 0 means not done at all or wrong, values in \
between for partial or doubtful work."""

TECHNICAL_INSTRUCTION = (
    "Score the technical quality of this work from 0 to 1. Output ONLY the number, for example 0.7"
)


@dataclass(frozen=True)
class Prompt:
    """One request's messages, with the version and hash the cache keeps it by."""

    version: str
    messages: Messages

    @property
    def input_hash(self) -> str:
        """SHA-256 of the messages (the model and the version are the cache key's other parts)."""
        text = json.dumps(self.messages, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def characters(self) -> int:
        return sum(len(content) for _, content in self.messages)


def _cut(text: str) -> str:
    if len(text) <= MAX_CONTEXT_CHARS:
        return text
    half = MAX_CONTEXT_CHARS // 2
    return f"{text[:half]}\n[… {len(text) - 2 * half} characters left out …]\n{text[-half:]}"


def effort_prompt(question: str, task: str | None) -> Prompt:
    """The request for one question's effort, with the run's task text as context."""
    context = _cut(task.strip()) if task and task.strip() else "(the run has no task text)"
    user = f"Task text:\n{context}\n\nQuestion the agent asked:\n{question.strip()}\n\n"
    return Prompt(
        EFFORT_PROMPT_VERSION,
        (("system", EFFORT_SYSTEM), ("user", user + EFFORT_INSTRUCTION)),
    )


def technical_prompt(task: str | None, output: str) -> Prompt:
    """The request for an unscored agent's technical score, from the task and its output."""
    context = _cut(task.strip()) if task and task.strip() else "(the run has no task text)"
    user = f"Task:\n{context}\n\nThe agent's final answer:\n{_cut(output.strip())}\n\n"
    return Prompt(
        TECHNICAL_PROMPT_VERSION,
        (("system", TECHNICAL_SYSTEM), ("user", user + TECHNICAL_INSTRUCTION)),
    )


# A reasoning model's thoughts come before its answer; they may name every label.
_THINKING = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.DOTALL | re.IGNORECASE)
_LABEL = re.compile(r"\b(low|medium|high)\b", re.IGNORECASE)
_FIRST_LABEL = re.compile(r"\W*(low|medium|high)\b(?!\s*(?:or\b|and\b|/|,|-))", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?|\.\d+)(\s*%)?(?![\w.])")


def _answer(text: str) -> str:
    return _THINKING.sub(" ", text).strip()


def parse_effort(text: str) -> Effort | None:
    """The effort an answer names: LOW, MEDIUM or HIGH whatever the case and punctuation
    ("**High**.", "Effort: medium"); None when it names none, or more than one."""
    answer = _answer(text)
    found = {match.lower() for match in _LABEL.findall(answer)}
    if len(found) == 1:
        return Effort(found.pop())
    if found:
        # "HIGH (not low)", "HIGH. A low-effort ...": a first word that is a label is the
        # answer, unless a choice follows it ("low or high", "low/medium").
        first = _FIRST_LABEL.match(answer)
        if first:
            return Effort(first.group(1).lower())
    return None


def parse_score(text: str) -> float | None:
    """The score an answer gives: its first number, if it is in [0, 1] ("0.8",
    "Score: 0.75 out of 1", "80%" is 0.8); None when it gives none or one outside."""
    match = _NUMBER.search(_answer(text))
    if match is None:
        return None
    value = float(match.group(1)) / (100 if match.group(2) else 1)
    return value if 0.0 <= value <= 1.0 else None


def estimated_tokens(prompt: Prompt, answer_tokens: int = 4) -> int:
    """A rough token count of one request: about four characters a token, plus the
    answer's few tokens and each message's framing."""
    return prompt.characters() // 4 + 4 * len(prompt.messages) + answer_tokens
