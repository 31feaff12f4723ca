"""Question extraction from an agent's response text.

The questions of a response are its sentences that end in "?" (or the full-width U+FF1F),
outside code blocks (fenced ``` / ~~~ blocks and inline `code`) and quoted text (> block
quotes and text in quotation marks). A "?" inside code or a quotation neither ends a
sentence nor makes one a question, but the code stays part of the question's text.

Some sentences ending in "?" are not put to the user, and do not count:
- a title: a Markdown heading, or a line bold as a whole, that more text follows (the
  text answers it), unless it asks "you";
- an item of a list of considerations: a list item whose list is introduced by text that
  asks nothing of the user ("it might be:"), when the item does not address the user;
- a question the agent answers itself in the next sentence ("Yes.", "Because ...").
Options that finish an unfinished question ("Would you like me to:" and a list) are one
question, its lead-in and its options.

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
from dataclasses import dataclass

_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_QUOTE_LINE = re.compile(r"^[ \t]*>")
_LIST_MARKER = re.compile(r"^(?:[-*+•]|\d+[.)]|[a-zA-Z][.)](?=\s))\s+")
_EMPHASIS = re.compile(r"^(?:\*\*|__)?(?:questions?|q\d*)\s*[:.]\s*(?:\*\*|__)?\s*", re.IGNORECASE)
# A Markdown heading, and a line that is bold as a whole: titles of what follows.
_HEADING = re.compile(r"^#{1,6}(?:\s|$)")
_BOLD = re.compile(r"(\*\*|__)(.+?)\1")
_WHOLE_BOLD = re.compile(r"^(\*\*|__)(?:(?!\1).)+\1[:.]?$")
# Words that put a question to the reader: "you", or the agent's own "I" / "we".
_YOU = re.compile(r"\b(?:you|your|yours)\b", re.IGNORECASE)
_ADDRESSED = re.compile(r"\b(?:[Yy]ou(?:rs?)?|I|[Mm][ey]|[Ww]e|[Uu]s|[Oo]ur)\b")
# A list's lead-in that asks for answers to its items ("Open questions for you:").
_INVITING = re.compile(
    r"\b(?:you|your|questions?|decid\w*|decisions?|prefer\w*|choose|choices?|clarif\w*"
    r"|confirm\w*|input|thoughts|feedback|let me know|need to know|settle|options?)\b",
    re.IGNORECASE,
)
# An unfinished question that a list of options completes ("Would you like me to:").
_INTERROGATIVE = re.compile(
    r"^(?:would|should|shall|do|does|did|can|could|which|what|how|want|may|will|is|are)\b",
    re.IGNORECASE,
)
# The start of an answer the agent gives its own question ("Yes.", "In most cases, no").
_ANSWER = re.compile(
    r"^(?:\*\*|__)?(?:(?:yes|no|nope|yep|yeah)(?:[,.!:;)]|\s+[\u2014\u2013-]|$)|because\b"
    r"|short answer\b|in short\b|in most cases\b|not really\b|probably not\b|it depends\b"
    r"|answer\s*:)",
    re.IGNORECASE,
)
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


@dataclass(frozen=True)
class _Block:
    """A paragraph-like block of prose: a paragraph, a list item, a heading, or a line
    that is bold as a whole (a title)."""

    text: str
    kind: str  # PROSE, ITEM, HEADING or TITLE
    indent: int = 0  # a list item's indentation


PROSE, ITEM, HEADING, TITLE = "prose", "item", "heading", "title"


def _blocks(text: str) -> list[_Block]:
    """The text's blocks of prose, fenced code and block quotes removed."""
    blocks: list[_Block] = []
    current: list[str] = []
    kind, indent = PROSE, 0

    def flush() -> None:
        if current:
            blocks.append(_Block(" ".join(current), kind, indent))
            current.clear()

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
            if _HEADING.match(stripped) or _WHOLE_BOLD.match(stripped):
                # A heading or a bold line is a block of its own, whatever follows it.
                flush()
                blocks.append(_Block(stripped, HEADING if stripped[0] == "#" else TITLE))
                continue
            if _LIST_MARKER.match(stripped):
                # A list item starts a block of its own.
                flush()
                kind, indent = ITEM, len(line) - len(line.lstrip())
            elif not current:
                kind, indent = PROSE, 0
            current.append(stripped)
            continue
        flush()
    flush()
    return blocks


def _spans(masked: str) -> list[tuple[int, int]]:
    """The (start, end) of each sentence of a block whose shielded spans are masked."""
    spans = []
    start = 0
    for match in _BOUNDARY.finditer(masked):
        # Only the sentence's last few characters can end in an abbreviation: searching
        # all of it again after each one made long texts quadratic. (The character
        # before `start` is a space, so a word boundary there is one as well.)
        end = match.start()
        if _ABBREVIATION.search(masked, max(start, end - _LONGEST_ABBREVIATION), end):
            continue
        spans.append((start, end))
        start = match.end()
    spans.append((start, len(masked)))
    return spans


def _sentences(block: str) -> list[tuple[str, bool]]:
    """The block's sentences, each with whether it is a question (ends in "?")."""
    # Mask shielded spans so their punctuation cannot split or end a sentence.
    masked = _SHIELDED.sub(lambda m: "x" * len(m.group()), block)
    return [
        (block[a:b], masked[a:b].rstrip(_TRAILING).endswith(_MARKS))
        for a, b in _spans(masked)
        if block[a:b].strip()
    ]


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
    """The questions a response asks the user, in order (see the module's docstring for
    the questions that do not count)."""
    if not text or not _mark_count(text):
        return []
    text = addressed_text(text)
    blocks = _blocks(text)
    leads = _leads(blocks)
    questions: list[str] = []
    merged: set[int] = set()  # the items of a list of options, taken with their lead-in
    for i, block in enumerate(blocks):
        if i in merged:
            continue
        options = _options_of(blocks, i)
        if options:
            merged.update(options)
            items = " / ".join(_BOLD.sub(r"\2", _clean(blocks[k].text)) for k in options)
            questions.append(f"{_last_sentence(block.text)} {items}")
            continue
        if not _mark_count(block.text):
            continue
        sentences = _sentences(block.text)
        for j, (sentence, asks) in enumerate(sentences):
            if not asks:
                continue
            cleaned = _clean(sentence)
            if len(cleaned) <= 1 or not _put_to_user(blocks, i, leads[i], cleaned):
                continue
            after = sentences[j + 1][0] if j + 1 < len(sentences) else _next_prose(blocks, i)
            if after is not None and _ANSWER.match(_clean(after)):
                continue  # the agent answers it itself
            questions.append(cleaned)
    return questions


def _put_to_user(blocks: list[_Block], i: int, lead: _Block | None, question: str) -> bool:
    """Whether a question of block `i` (introduced by `lead`, if it is a list item) is
    put to the user, by where it stands: a title the text goes on to answer is not, nor
    an item of a list of considerations."""
    block = blocks[i]
    if block.kind in (HEADING, TITLE):
        # A title with more text after it is answered there, unless it asks you.
        return (
            i + 1 == len(blocks) or blocks[i + 1].kind == ITEM or _YOU.search(question) is not None
        )
    if block.kind == ITEM:
        if lead is None or _invites(lead.text):
            return True
        return _ADDRESSED.search(question) is not None
    return True


def _leads(blocks: list[_Block]) -> list[_Block | None]:
    """For each list item, the block that introduces it: the nearest before it that is
    not an item of the same list (or of a list nested in it); None for other blocks."""
    leads: list[_Block | None] = []
    last: _Block | None = None  # the last block that is no list item
    items: list[_Block] = []  # the open items, by growing indentation
    for block in blocks:
        if block.kind != ITEM:
            leads.append(None)
            last, items = block, []
            continue
        while items and items[-1].indent >= block.indent:
            items.pop()
        leads.append(items[-1] if items else last)
        items.append(block)
    return leads


def _invites(lead: str) -> bool:
    """Whether a list's lead-in asks for the user's answers to its items."""
    tail = lead.rstrip().rstrip(_TRAILING)
    return tail.endswith(_MARKS) or _INVITING.search(lead) is not None


def _options_of(blocks: list[_Block], i: int) -> list[int]:
    """The items of a list of options that block `i` introduces with an unfinished
    question ("Would you like me to:"), or [] when it does not."""
    block = blocks[i]
    if block.kind == HEADING or not block.text.rstrip(_TRAILING).endswith(":"):
        return []
    if not _INTERROGATIVE.match(_clean(_last_sentence(block.text))):
        return []
    items = []
    for k in range(i + 1, len(blocks)):
        inner = blocks[k]
        if inner.kind != ITEM or (block.kind == ITEM and inner.indent <= block.indent):
            break
        items.append(k)
    return items


def _last_sentence(block: str) -> str:
    masked = _SHIELDED.sub(lambda m: "x" * len(m.group()), block)
    start, end = _spans(masked)[-1]
    return block[start:end].strip()


def _next_prose(blocks: list[_Block], i: int) -> str | None:
    """The first sentence of the paragraph after block `i`, if a paragraph follows."""
    if i + 1 < len(blocks) and blocks[i + 1].kind == PROSE:
        sentences = _sentences(blocks[i + 1].text)
        return sentences[0][0] if sentences else None
    return None
