"""Question extraction from an agent's response text.

The questions of a response are its sentences that end in "?" (or the full-width U+FF1F),
outside code blocks (fenced ``` / ~~~ blocks and inline `code`) and quoted text (> block
quotes and text in quotation marks). A "?" inside code or a quotation neither ends a
sentence nor makes one a question, but the code stays part of the question's text.

Only text addressed to the user is read. The agent's thinking is not: <think> (and
<thinking>, <reasoning>) blocks, the "Thought:" sections of a ReAct agent, and, in a
response that calls a tool, the prose written before the call. A question put to the user
through a tool call written in the text (`<function=ask_question>` with its `query`, or a
`<tool_call>` JSON object naming ask_question or AskUserQuestion) is an ask: `inline_asks`
returns those, one per call, with or without "?".
"""

from __future__ import annotations

import json
import re

_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_QUOTE_LINE = re.compile(r"^[ \t]*>")
_LIST_MARKER = re.compile(r"^(?:[-*+•]|\d+[.)]|[a-zA-Z][.)](?=\s))\s+")
_EMPHASIS = re.compile(r"^(?:\*\*|__)?(?:questions?|q\d*)\s*[:.]\s*(?:\*\*|__)?\s*", re.IGNORECASE)
# Inline code and quotations whose "?" must not end a sentence.
_SHIELDED = re.compile(r"`[^`\n]*`|\"[^\"\n]*\"|“[^”\n]*”")
# A sentence ends at . ! ? followed by space and a likely sentence start.
# A full-width stop ends a sentence even without a space after it.
_BOUNDARY = re.compile(
    r"(?<=[.!?])[\"')\]*_]*\s+(?=[\"'(\[*_]*[A-Z0-9`])|(?<=[\uff1f\uff01\u3002])\s*(?=\S)"
)
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|Mr|Mrs|Dr|No)\.$", re.IGNORECASE)
_TRAILING = "\"')]*_ "
_MARKS = ("?", "\uff1f")

# The agent's thinking, never addressed to the user.
_THINK_BLOCK = re.compile(
    r"<(think|thinking|reasoning|reflection)>.*?(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE
)
# An unclosed thought whose opening tag was in the prompt: everything up to </think>.
_THINK_TAIL = re.compile(r"\A.*?</(?:think|thinking|reasoning)>", re.DOTALL | re.IGNORECASE)
# ReAct sections: a "Thought:" runs until the next section label.
_REACT_LABEL = re.compile(
    r"^[ \t]*(?:\*\*)?(Thought|Thinking|Reasoning|Plan|Action|Action Input|Observation|"
    r"Final Answer|Answer|Response|Message)(?:\*\*)?[ \t]*:(?:\*\*)?",
    re.IGNORECASE | re.MULTILINE,
)
_THOUGHT_LABELS = frozenset({"thought", "thinking", "reasoning"})
_THOUGHT_CUES = ("hought", "HOUGHT", "hinking", "HINKING", "easoning", "EASONING")
_ADDRESSED_LABELS = frozenset({"final answer", "answer", "response", "message"})
# Tool calls written in the text: the paper's agent format and JSON <tool_call> blocks.
_FUNCTION_CALL = re.compile(r"<function=([^>\s]+)>(.*?)(?:</function>|\Z)", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\s]+)>(.*?)(?:</parameter>|(?=<parameter=)|\Z)", re.DOTALL)
_JSON_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
ASK_TOOLS = frozenset({"ask_question", "askuserquestion", "ask_user", "ask_user_question"})
# The most characters an _ABBREVIATION match spans ("approx."), and one more.
_LONGEST_ABBREVIATION = 8


def _blocks(text: str) -> list[str]:
    """Paragraph-like blocks of prose: fenced code and block quotes removed."""
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        marker = _FENCE.match(line)
        if fence is not None:
            if marker and marker.group(1) == fence:
                fence = None
            continue
        if marker:
            fence = marker.group(1)
        elif line.strip() and not _QUOTE_LINE.match(line):
            stripped = line.strip()
            # A list item or heading starts a block of its own.
            if current and (_LIST_MARKER.match(stripped) or stripped.startswith("#")):
                blocks.append(" ".join(current))
                current = []
            current.append(stripped)
            continue
        if current:
            blocks.append(" ".join(current))
            current = []
    if current:
        blocks.append(" ".join(current))
    return blocks


def _sentences(block: str) -> list[str]:
    # Mask shielded spans so their punctuation cannot split or end a sentence.
    masked = _SHIELDED.sub(lambda m: "x" * len(m.group()), block)
    sentences = []
    start = 0
    for match in _BOUNDARY.finditer(masked):
        # Only the sentence's last few characters can end in an abbreviation: searching
        # all of it again after each one made long texts quadratic. (The character
        # before `start` is a space, so a word boundary there is one as well.)
        end = match.start()
        if _ABBREVIATION.search(masked, max(start, end - _LONGEST_ABBREVIATION), end):
            continue
        sentences.append((start, match.start()))
        start = match.end()
    sentences.append((start, len(block)))
    return [block[a:b] for a, b in sentences if masked[a:b].rstrip(_TRAILING).endswith(_MARKS)]


def _clean(sentence: str) -> str:
    sentence = sentence.strip().lstrip("#").strip()
    sentence = _LIST_MARKER.sub("", sentence)
    return _EMPHASIS.sub("", sentence).strip()


def _mark_count(text: str) -> int:
    return text.count("?") + text.count("\uff1f")


def _drop_thoughts(text: str) -> str:
    """The text with ReAct thought, action and observation sections left out."""
    if not any(cue in text for cue in _THOUGHT_CUES):
        return text  # no thought label, so nothing to leave out
    labels = list(_REACT_LABEL.finditer(text))
    if not any(m.group(1).lower() in _THOUGHT_LABELS for m in labels):
        return text
    kept = [text[: labels[0].start()]]
    for i, label in enumerate(labels):
        end = labels[i + 1].start() if i + 1 < len(labels) else len(text)
        if label.group(1).lower() in _ADDRESSED_LABELS:
            kept.append(text[label.end() : end])
    return "\n".join(kept)


def calls_a_tool(text: str) -> bool:
    """Whether the response calls a tool in its text (the paper's format or <tool_call>)."""
    return ("<function=" in text and _FUNCTION_CALL.search(text) is not None) or (
        "<tool_call>" in text and _JSON_TOOL_CALL.search(text) is not None
    )


def addressed_text(text: str) -> str:
    """The part of a response addressed to the user: no thinking, no tool calls.

    A response that calls a tool speaks to the tool, and its prose is the agent's reasoning
    about the call (the paper's agents write it before the call), so none of it is kept.
    """
    if "<" in text:
        if "</" in text:
            text = _THINK_BLOCK.sub("\n", text)
            if _THINK_TAIL.match(text):
                text = _THINK_TAIL.sub("\n", text, count=1)
        elif _THINK_BLOCK.search(text):
            text = _THINK_BLOCK.sub("\n", text)
    if calls_a_tool(text):
        return ""
    return _drop_thoughts(text)


def _option_label(option: object) -> str:
    if isinstance(option, dict):
        label = option.get("label") or option.get("value") or option.get("text")
        return label if isinstance(label, str) else ""
    return option if isinstance(option, str) else ""


def ask_texts(name: str, arguments: object) -> list[str] | None:
    """The questions one tool call puts to the user, or None if the tool does not ask.

    ask_question (the paper's tool) asks its `query`; AskUserQuestion asks each of its
    `questions`, its options listed under the question. An ask with no text is still an
    ask: its text is empty.
    """
    if name.strip().lower() not in ASK_TOOLS:
        return None
    if isinstance(arguments, str):
        text = arguments
        try:
            arguments = json.loads(text)
        except ValueError:
            return [text.strip()]
    if not isinstance(arguments, dict):
        return [""]
    listed = arguments.get("questions")
    if isinstance(listed, list) and listed:
        texts = []
        for item in listed:
            if isinstance(item, str):
                texts.append(item.strip())
                continue
            if not isinstance(item, dict):
                texts.append("")
                continue
            question = item.get("question") or item.get("text") or ""
            options = [_option_label(o) for o in item.get("options") or [] if _option_label(o)]
            text = question.strip() if isinstance(question, str) else ""
            if options:
                text = "\n".join([text, *(f"- {label}" for label in options)]).strip()
            texts.append(text)
        return texts
    for key in ("query", "question", "text", "prompt", "message"):
        value = arguments.get(key)
        if isinstance(value, str):
            return [value.strip()]
    return [""]


def inline_asks(text: str | None) -> list[str] | None:
    """The asks of the tool calls written in a response, one per call, in order.

    None when the response calls no tool at all, so that its prose is read instead.
    """
    if not text or ("<function=" not in text and "<tool_call>" not in text):
        return None
    found: list[tuple[int, str]] = []
    calls = False
    for match in _FUNCTION_CALL.finditer(text):
        calls = True
        arguments = {k.strip(): v.strip() for k, v in _PARAMETER.findall(match.group(2))}
        for ask in ask_texts(match.group(1), arguments) or []:
            found.append((match.start(), ask))
    for match in _JSON_TOOL_CALL.finditer(text):
        calls = True
        body = re.sub(r"\A```(?:json)?\s*|\s*```\Z", "", match.group(1))
        try:
            call = json.loads(body)
        except ValueError:
            continue
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            for ask in ask_texts(call["name"], call.get("arguments", {})) or []:
                found.append((match.start(), ask))
    if not calls:
        return None
    return [ask for _, ask in sorted(found, key=lambda item: item[0])]


def extract_questions(text: str | None) -> list[str]:
    """The questions a response asks the user, in order."""
    if not text or not _mark_count(text):
        return []
    text = addressed_text(text)
    questions = []
    for block in _blocks(text):
        if not _mark_count(block):
            continue
        for sentence in _sentences(block):
            cleaned = _clean(sentence)
            if len(cleaned) > 1:
                questions.append(cleaned)
    return questions
