"""format and web (env_reward) verifiers."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from services.common.wire import Message, ScoreItem, ToolCall
from services.reward.verifiers.base import VerifierError
from services.reward.verifiers.env_reward import EnvRewardVerifier
from services.reward.verifiers.format import FormatVerifier


def _episode(*messages: Message, final_answer: str | None = "42") -> ScoreItem:
    return ScoreItem(
        env="arithmetic",
        task_id="t",
        task_type="format",
        final_answer=final_answer,
        messages=[Message(role="user", content="What is 6 * 7?"), *messages],
    )


def test_well_formed_episode_passes() -> None:
    call = ToolCall(id="call_1", name="calculate", arguments={"expression": "6 * 7"})
    item = _episode(
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", content="42", tool_call_id="call_1", name="calculate"),
        Message(role="assistant", content="The answer is 42"),
    )
    verdict = FormatVerifier().score(item)
    assert verdict.reward == 1.0 and verdict.details["failures"] == {}


def test_format_failures_are_listed() -> None:
    malformed = _episode(
        Message(role="assistant", content="<tool_call>{oops", tool_call_error="invalid JSON"),
        final_answer=None,
    )
    verdict = FormatVerifier().score(malformed)
    assert verdict.reward == 0.0
    assert set(verdict.details["failures"]) == {"final_answer", "tool_calls"}
    orphan = _episode(Message(role="tool", content="42", tool_call_id="call_x"))
    assert "unknown call" in FormatVerifier().score(orphan).details["failures"]["tool_calls"]
    blank = _episode(final_answer="   ")
    assert FormatVerifier().score(blank).reward == 0.0


def test_web_passes_env_reward_through(make_item: Callable[..., ScoreItem]) -> None:
    verifier = EnvRewardVerifier("web")
    assert verifier.score(make_item("web", env="web", env_reward=1.0)).reward == 1.0
    assert verifier.score(make_item("web", env="web", env_reward=0.0)).reward == 0.0
    with pytest.raises(VerifierError, match="no env_reward"):
        verifier.score(make_item("web", env="web"))
    with pytest.raises(VerifierError, match="finite"):
        verifier.score(make_item("web", env="web", env_reward=float("nan")))
