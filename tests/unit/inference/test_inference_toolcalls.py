"""Tool-call parsing and streaming detokenization (no model needed)."""

from __future__ import annotations

import json
import subprocess
import sys

from services.common.wire import ToolCall
from services.inference.detok import TextStream
from services.inference.toolcalls import format_tool_call, parse_tool_calls, to_openai


def test_plain_text_has_no_calls() -> None:
    parsed = parse_tool_calls("The answer is 4.")
    assert parsed.content == "The answer is 4." and parsed.tool_calls == [] and not parsed.malformed


def test_hermes_calls_are_parsed_with_surrounding_text() -> None:
    text = (
        'Let me look.\n<tool_call>\n{"name": "search", "arguments": {"q": "Paris"}}\n</tool_call>'
        '<tool_call>{"name": "calc", "arguments": "{\\"expr\\": \\"2+2\\"}"}</tool_call>'
    )
    parsed = parse_tool_calls(text)
    assert parsed.content == "Let me look."
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [
        ("search", {"q": "Paris"}),
        ("calc", {"expr": "2+2"}),
    ]
    assert parsed.error is None


def test_malformed_calls_come_back_as_text_with_a_flag() -> None:
    for text, why in [
        ("<tool_call>{not json}</tool_call>", "invalid JSON"),
        ('<tool_call>{"arguments": {}}</tool_call>', "missing 'name'"),
        ('<tool_call>{"name": "x", "arguments": [1]}</tool_call>', "must be a JSON object"),
        ('<tool_call>{"name": "x", "arguments": {}}', "unbalanced"),
    ]:
        parsed = parse_tool_calls(text)
        assert parsed.content == text and parsed.tool_calls == []
        assert parsed.error is not None and why in parsed.error


def test_format_and_openai_shape_round_trip() -> None:
    call = ToolCall(name="sql", arguments={"query": "SELECT 1"})
    parsed = parse_tool_calls(format_tool_call(call))
    assert parsed.tool_calls[0].name == "sql"
    assert parsed.tool_calls[0].arguments == {"query": "SELECT 1"}
    shaped = to_openai(call)
    assert shaped["type"] == "function"
    assert json.loads(shaped["function"]["arguments"]) == {"query": "SELECT 1"}


def test_toolcalls_module_is_slim() -> None:
    code = (
        "import sys, services.inference.toolcalls, services.inference.detok;"
        "print([m for m in ('torch','vllm','transformers') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


class CharTokenizer:
    """One token per character: enough to exercise the text stream."""

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return "".join(chr(i) for i in ids)


def _feed(stream: TextStream, text: str) -> str:
    return "".join(stream.feed([ord(c)]) for c in text)


def test_stream_holds_back_tool_calls_and_partial_tags() -> None:
    stream = TextStream(CharTokenizer(), hold_tools=True)
    shown = _feed(stream, 'Hi <tool_call>{"name": "a"}</tool_call>')
    assert shown == "Hi "
    assert stream.rest() == '<tool_call>{"name": "a"}</tool_call>'
    partial = TextStream(CharTokenizer(), hold_tools=True)
    assert _feed(partial, "ok <tool_") == "ok "


def test_stream_cuts_at_stop_strings_without_leaking_them() -> None:
    stream = TextStream(CharTokenizer(), stop=["STOP"])
    shown = _feed(stream, "abc STOP def")
    assert shown + stream.rest() == "abc "
    assert stream.stopped
