"""format: structural checks on the episode; reward 1 when every check passes, else 0."""

from __future__ import annotations

from services.common.wire import Message, ScoreItem
from services.reward.verifiers.base import Verdict, Verifier
from services.reward.verifiers.extract import answer_text


def check_final_answer(item: ScoreItem) -> str | None:
    answer = answer_text(item)
    if answer is None or not answer.strip():
        return "no final answer"
    return None


def check_tool_calls(messages: list[Message]) -> str | None:
    """Every tool call parsed, and every tool reply answers a call made before it."""
    issued: set[str] = set()
    for i, message in enumerate(messages):
        if message.role == "assistant":
            if message.tool_call_error:
                return f"message {i}: malformed tool call ({message.tool_call_error})"
            issued.update(call.id for call in message.tool_calls)
        elif message.role == "tool" and message.tool_call_id not in issued:
            return f"message {i}: tool reply to unknown call {message.tool_call_id!r}"
    return None


CHECKS = {
    "final_answer": check_final_answer,
    "tool_calls": lambda item: check_tool_calls(item.messages),
}


class FormatVerifier(Verifier):
    name = "format"
    description = (
        "Format checks: a final answer is present and every tool call is well formed and "
        "answered in order. Reward 1 if all pass, else 0; failures listed in details."
    )

    def score(self, item: ScoreItem) -> Verdict:
        failures = {name: msg for name, check in CHECKS.items() if (msg := check(item))}
        details = {"checks": list(CHECKS), "failures": failures}
        return Verdict(0.0 if failures else 1.0, details)
