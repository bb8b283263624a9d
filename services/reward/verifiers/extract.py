"""Where a verifier finds the agent's answer in a ScoreItem."""

from __future__ import annotations

import re

from services.common.wire import ScoreItem

_TAGGED = (
    re.compile(r"<answer>(.*?)</answer>", re.S | re.I),
    re.compile(r"\\boxed\{([^{}]*)\}"),
    re.compile(r"final answer\s*(?:is)?\s*[:=]?\s*(.+)", re.I),
)


def last_assistant_text(item: ScoreItem) -> str | None:
    for message in reversed(item.messages):
        if message.role == "assistant" and message.content.strip():
            return message.content
    return None


def tagged_answer(text: str) -> str | None:
    """An answer the text marks explicitly (<answer>..</answer>, \\boxed{..}, 'Final
    answer: ..'); the last such mark wins."""
    for pattern in _TAGGED:
        found = pattern.findall(text)
        if found:
            return found[-1].strip().splitlines()[0].strip() if found[-1].strip() else ""
    return None


def answer_text(item: ScoreItem) -> str | None:
    """The agent's answer: `final_answer` when the environment recorded one (its finishing
    tool), else the explicitly marked answer in the last assistant message."""
    if item.final_answer is not None:
        return item.final_answer
    text = last_assistant_text(item)
    return tagged_answer(text) if text is not None else None
