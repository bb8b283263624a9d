"""The reward service over real HTTP (uvicorn), through its typed clients."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from judge_server import JudgeServer

from environments.registry import get_task_set
from services.common.errors import BadRequest
from services.common.wire import ScoreItem
from services.reward.client import AsyncRewardClient, RewardClient

VERIFIERS = {"exact_match", "arithmetic", "sql", "code", "web", "format", "llm_judge"}


def _batch(data_dir: Path) -> tuple[list[ScoreItem], list[tuple[bool, float]]]:
    tasks = get_task_set("arithmetic", "default", data_dir=data_dir).split("eval")[:3]
    items = [
        ScoreItem(
            env="arithmetic",
            task_id=tasks[0].task_id,
            task_type="arithmetic",
            final_answer=f"The answer is {tasks[0].answer}.0",
        ),
        ScoreItem(
            env="arithmetic", task_id=tasks[1].task_id, task_type="arithmetic", final_answer="-5"
        ),
        ScoreItem(env="arithmetic", task_id="missing", task_type="arithmetic", final_answer="1"),
        ScoreItem(
            env="arithmetic",
            task_id=tasks[2].task_id,
            task_type="llm_judge",
            final_answer=tasks[2].answer,
        ),
        ScoreItem(env="web", task_id="w1", task_type="web", env_reward=1.0),
        ScoreItem(env="web", task_id="w2", task_type="web"),
        ScoreItem(env="x", task_id="y", task_type="unheard_of"),
        ScoreItem(env="arithmetic", task_id=tasks[0].task_id, task_type="format"),
    ]
    expected = [(True, 1.0), (True, 0.0), (False, 0.0), (True, 0.9), (True, 1.0),
                (False, 0.0), (False, 0.0), (True, 0.0)]  # fmt: skip
    return items, expected


def test_verifier_listing(reward_url: str) -> None:
    with RewardClient(reward_url) as client:
        infos = client.verifiers()
    assert {v.name for v in infos} == VERIFIERS
    assert all(v.description and v.timeout_s > 0 for v in infos)
    assert next(v for v in infos if v.name == "llm_judge").timeout_s == 2.0


def test_batch_scoring_in_order(reward_url: str, judge: JudgeServer, data_dir: Path) -> None:
    judge.reply("SCORE: 9")
    items, expected = _batch(data_dir)
    with RewardClient(reward_url) as client:
        results = client.score(items)
    assert [(r.ok, r.reward) for r in results] == expected
    assert [r.verifier for r in results] == [i.task_type for i in items]
    assert all(r.error for r in results if not r.ok)
    assert "missing" in (results[2].error or "")


async def test_async_client_and_judge_timeout(
    reward_url: str, judge: JudgeServer, data_dir: Path
) -> None:
    judge.reply(3.0)  # stalls past the service's 2 s llm_judge limit
    items, _ = _batch(data_dir)
    async with AsyncRewardClient(reward_url) as client:
        results = await client.score([items[3], items[0]])
    assert results[0].ok is False and (results[0].error or "").startswith("timeout")
    assert results[1].ok and results[1].reward == 1.0


def test_validation_errors_and_ops_routes(reward_url: str) -> None:
    with RewardClient(reward_url) as client:
        assert client.score([]) == []
        with pytest.raises(BadRequest, match="task_type"):
            client._request("POST", "/v1/score", json={"items": [{"env": "a", "task_id": "b"}]})
    assert httpx.post(f"{reward_url}/v1/score", json={"items": []}).status_code == 422
    body = {"items": [{"env": "a", "task_id": "b"}]}  # no task_type
    assert httpx.post(f"{reward_url}/v1/score", json=body).status_code == 422
    assert httpx.get(f"{reward_url}/healthz").json()["status"] == "ok"
    assert httpx.get(f"{reward_url}/readyz").status_code == 200
    metrics = httpx.get(f"{reward_url}/metrics").text
    assert "slipstream_reward_verifier_scores_total" in metrics
    assert 'slipstream_reward_verifier_seconds_bucket{le="0.001",verifier="arithmetic"}' in metrics
