"""Tool-call parsing: the model's Hermes-style `<tool_call>{json}</tool_call>` text ->
OpenAI-shaped tool calls. Slim on purpose (stdlib + the wire module): rollout workers reuse
it on the text of the tokens they already hold, so nothing is ever re-tokenized.

A malformed call is never an exception: the text comes back whole as content, with no
calls and an `error` saying what was wrong (the episode treats it as data).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from services.common.wire import ToolCall

OPEN_TAG = "<tool_call>"
CLOSE_TAG = "</tool_call>"
_BLOCK = re.compile(re.escape(OPEN_TAG) + r"(.*?)" + re.escape(CLOSE_TAG), re.DOTALL)


@dataclass
class ParsedMessage:
    """What the assistant said: free text, the calls it made, and a parse error if any."""

    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    error: str | None = None

    @property
    def malformed(self) -> bool:
        return self.error is not None


def has_tool_call(text: str) -> bool:
    return OPEN_TAG in text


def parse_tool_calls(text: str) -> ParsedMessage:
    """Split `text` into content and Hermes tool calls (see the module doc)."""
    if OPEN_TAG not in text:
        return ParsedMessage(content=text)
    calls: list[ToolCall] = []
    for index, match in enumerate(_BLOCK.finditer(text)):
        call, error = _parse_block(match.group(1))
        if error is not None:
            return ParsedMessage(content=text, error=f"tool call {index}: {error}")
        assert call is not None
        calls.append(call)
    leftover = _BLOCK.sub("", text)
    if OPEN_TAG in leftover or CLOSE_TAG in leftover:
        return ParsedMessage(content=text, error="unbalanced <tool_call> tags")
    return ParsedMessage(content=leftover.strip(), tool_calls=calls)


def _parse_block(body: str) -> tuple[ToolCall | None, str | None]:
    try:
        obj = json.loads(body.strip())
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON ({exc.msg} at char {exc.pos})"
    if not isinstance(obj, dict):
        return None, "expected a JSON object"
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        return None, "missing 'name'"
    arguments: Any = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return None, "'arguments' is a string that is not JSON"
    if not isinstance(arguments, dict):
        return None, "'arguments' must be a JSON object"
    return ToolCall(name=name, arguments=arguments), None


def format_tool_call(call: ToolCall) -> str:
    """The Hermes text of one call (what the chat template renders for history)."""
    payload = json.dumps({"name": call.name, "arguments": call.arguments})
    return f"{OPEN_TAG}\n{payload}\n{CLOSE_TAG}"


def to_openai(call: ToolCall) -> dict[str, Any]:
    """One call in OpenAI's `tool_calls` shape (arguments as a JSON string)."""
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
    }
