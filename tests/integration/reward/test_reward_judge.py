"""llm_judge against a real HTTP server speaking the OpenAI chat format."""

from __future__ import annotations

from pathlib import Path

import pytest
from judge_server import JudgeServer

from environments.registry import get_task_set
from environments.tasks import Task
from services.common.wire import Message, ScoreItem
from services.reward.gold import registry_lookup
from services.reward.scoring import Scorer
from services.reward.settings import RewardSettings
from services.reward.verifiers.base import VerifierError, VerifierRegistry
from services.reward.verifiers.judge import JudgeConfig, JudgeVerifier


@pytest.fixture(scope="module")
def task(data_dir: Path) -> Task:
    return get_task_set("arithmetic", "default", data_dir=data_dir).split("eval")[0]


def _item(task: Task, answer: str = "42") -> ScoreItem:
    return ScoreItem(
        env="arithmetic",
        task_id=task.task_id,
        task_type="llm_judge",
        messages=[
            Message(role="user", content=task.prompt),
            Message(role="assistant", content=f"The answer is {answer}"),
        ],
        final_answer=answer,
    )


def _verifier(judge: JudgeServer, data_dir: Path, attempts: int = 3) -> JudgeVerifier:
    config = JudgeConfig(
        url=judge.url, model="tiny", rubric="Grade it. End with SCORE: N", max_attempts=attempts
    )
    return JudgeVerifier(registry_lookup(str(data_dir)), config)


async def test_parseable_verdict_with_rubric_and_reference(
    judge: JudgeServer, data_dir: Path, task: Task
) -> None:
    judge.reply("The response matches the reference.\nSCORE: 7")
    verifier = _verifier(judge, data_dir)
    verdict = await verifier.ascore(_item(task, task.answer or ""))
    await verifier.aclose()
    assert verdict.reward == pytest.approx(0.7)
    assert verdict.details["attempts"] == 1 and verdict.details["reference"] is True
    [request] = judge.requests
    assert request["path"] == "/v1/chat/completions"
    body = request["body"]
    assert body["model"] == "tiny" and body["temperature"] == 0.0
    system, user = body["messages"]
    assert system == {"role": "system", "content": "Grade it. End with SCORE: N"}
    assert task.prompt in user["content"]
    assert f"REFERENCE:\n{task.answer}" in user["content"]


async def test_retries_then_success(judge: JudgeServer, data_dir: Path, task: Task) -> None:
    judge.reply("I think it's fine", 500, '{"score": 10}')
    verifier = _verifier(judge, data_dir)
    verdict = await verifier.ascore(_item(task))
    await verifier.aclose()
    assert verdict.reward == 1.0 and verdict.details["attempts"] == 3
    assert len(judge.requests) == 3


async def test_unparseable_verdict_is_a_recorded_failure(
    judge: JudgeServer, data_dir: Path, task: Task
) -> None:
    judge.reply("Looks good to me!", "SCORE: 11")  # no score, then off the 0..10 scale
    verifier = _verifier(judge, data_dir, attempts=2)
    with pytest.raises(VerifierError, match="unparseable verdict") as info:
        await verifier.ascore(_item(task))
    await verifier.aclose()
    assert "attempt 2" in str(info.value)
    assert len(judge.requests) == 2

    judge.reply("Looks good to me!")
    scorer = Scorer(
        RewardSettings(judge_max_attempts=2), VerifierRegistry([_verifier(judge, data_dir, 2)])
    )
    [result] = await scorer.score([_item(task)])
    await scorer.aclose()
    assert result.ok is False and result.verifier == "llm_judge"
    assert result.error is not None and "no usable verdict" in result.error


async def test_judge_without_gold_uses_the_transcript(judge: JudgeServer, data_dir: Path) -> None:
    judge.reply("SCORE: 4")
    item = ScoreItem(
        env="nowhere",
        task_id="free-form",
        task_type="llm_judge",
        messages=[
            Message(role="user", content="Write a haiku about rain."),
            Message(role="assistant", content="Rain taps the window"),
        ],
    )
    verifier = _verifier(judge, data_dir)
    verdict = await verifier.ascore(item)
    await verifier.aclose()
    assert verdict.reward == pytest.approx(0.4) and verdict.details["reference"] is False
    user = judge.requests[0]["body"]["messages"][1]["content"]
    assert "Write a haiku about rain." in user and "Rain taps the window" in user


async def test_unreachable_judge_fails_after_bounded_attempts(data_dir: Path, task: Task) -> None:
    config = JudgeConfig(url="http://127.0.0.1:9", model="m", rubric="r", max_attempts=2)
    verifier = JudgeVerifier(registry_lookup(str(data_dir)), config)
    with pytest.raises(VerifierError, match="ConnectError"):
        await verifier.ascore(_item(task))
    await verifier.aclose()


async def test_client_errors_are_not_retried(
    judge: JudgeServer, data_dir: Path, task: Task
) -> None:
    judge.reply(404)  # e.g. a model name the server does not serve
    verifier = _verifier(judge, data_dir, attempts=3)
    with pytest.raises(VerifierError, match="HTTP 404 from judge"):
        await verifier.ascore(_item(task))
    await verifier.aclose()
    assert len(judge.requests) == 1
