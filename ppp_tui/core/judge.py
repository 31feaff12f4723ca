"""What an LLM judge is asked and how its answers are read (docs/judge.md).

Two prompts: the effort of a question an agent put to the user, with the run's task
text as context (the definitions are the classifier's, docs/effort.md, after the PPP
paper), and a technical score from 0 to 1 for an agent no test run scored, from the task
and the agent's final output. Each has a version: a judgment is kept by (model, prompt
version, hash of the prompt's input), so changing a prompt's words means a new version.
An answer counts when it is the label (or the number) itself, read tolerantly (case,
punctuation, emphasis, a short lead-in, a reasoning model's <think> block, an
explanation after it); anything else is unparseable, never guessed.
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
# Emphasis and quotes around an answer: **High**, `LOW`, "medium", [0.7].
_MARKUP = re.compile(r"[*_`#\"'\u2018\u2019\u201c\u201d\u00ab\u00bb\[\]]")
# A short lead-in before the answer: "Effort: ", "The effort is ", "Score = ".
_LEAD_IN = (
    r"(?:(?P<lead>[^\W\d_]+(?:[ \t-]+[^\W\d_]+){0,7}?)"
    r"\s*(?:\s(?:is|would be)\b|[:=\u2013\u2014-])\s*)?"
)
_EFFORT_ANSWER = re.compile(
    rf"{_LEAD_IN}(?P<answer>low|medium|high)(?:\s+effort\b)?(?P<rest>.*)", re.IGNORECASE | re.DOTALL
)
_SCORE_ANSWER = re.compile(
    rf"{_LEAD_IN}(?P<answer>\d{{1,6}}(?:\.\d{{1,12}})?|\.\d{{1,12}})(?P<percent>\s*%)?"
    r"(?:\s*(?:/|out of)\s*1(?:\.0+)?(?![\d.]))?(?P<rest>.*)",
    re.IGNORECASE | re.DOTALL,
)
# What may follow an answer: nothing but a full stop, or an explanation set apart from it
# ("HIGH. The user must...", "0.8 - mostly done", "LOW (an option is offered)").
_AFTER = re.compile(
    r"[\s.!]*|[.!]?(?:\s*\n|\s*\(|\s+[\u2013\u2014-]\s|[:;,]?\s+because\s|[.:;]\s).*",
    re.DOTALL | re.IGNORECASE,
)
_LABEL_WORDS = frozenset({"low", "medium", "high", "not", "no", "never"})
_SECOND_LABEL = re.compile(r"(?:low|medium|high)\b", re.IGNORECASE)
_LABEL_LINE = re.compile(r"\n\W*(?:low|medium|high)\b", re.IGNORECASE)


def _answer(text: str) -> str:
    return _MARKUP.sub("", _THINKING.sub(" ", text)).strip()


def _whole_answer(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The match of an answer that is `pattern`'s answer and nothing else, but for a
    short lead-in and an explanation set apart after it."""
    found = pattern.fullmatch(_answer(text))
    if found is None or not _AFTER.fullmatch(found.group("rest")):
        return None
    lead = (found.group("lead") or "").lower().replace("-", " ").split()
    if _LABEL_WORDS.intersection(lead):
        return None  # "not LOW", "LOW or HIGH"
    explanation = _answer(found.group("rest")).lstrip(".!:;,(-\u2013\u2014 \n\t")
    if _SECOND_LABEL.match(explanation) or _LABEL_LINE.search(explanation):
        return None  # "LOW. HIGH.", or "LOW: ...\nMEDIUM: ..." reciting the definitions
    return found


def parse_effort(text: str) -> Effort | None:
    """The effort an answer gives: the answer must be LOW, MEDIUM or HIGH itself, in any
    case, with punctuation or emphasis ("**High**.", "low"), a short lead-in ("Effort:
    medium", "The effort is HIGH") and an explanation set apart after it ("HIGH. The
    user must..."). Anything else, such as a sentence that mentions a label in passing
    or a list of them ("LOW, MEDIUM"), is None: unparseable, never guessed."""
    found = _whole_answer(_EFFORT_ANSWER, text)
    return None if found is None else Effort(found.group("answer").lower())


def parse_score(text: str) -> float | None:
    """The score an answer gives: the answer must be a number in [0, 1] itself ("0.8",
    "Score: 0.75 out of 1", "80%" is 0.8), with the same lead-in and explanation an
    effort may have; None for anything else (a number mentioned in passing, one
    outside [0, 1], a sign)."""
    found = _whole_answer(_SCORE_ANSWER, text)
    if found is None:
        return None
    value = float(found.group("answer")) / (100 if found.group("percent") else 1)
    return value if 0.0 <= value <= 1.0 else None


def estimated_tokens(prompt: Prompt, answer_tokens: int = 4) -> int:
    """A rough token count of one request: about four characters a token, plus the
    answer's few tokens and each message's framing."""
    return prompt.characters() // 4 + 4 * len(prompt.messages) + answer_tokens
