"""Rollout against the real services: the inference service (hf engine, tiny model) and
the arithmetic environment server as processes, in-process verifiers, the real replay
store. Token sequences must decode to the episode's messages and loss masks must cover
exactly the model's tokens."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rollout_procs import ROOT, environments_env, inference_env, service

from environments.client import AsyncEnvironmentsClient
from services.common.jobspec import Endpoints, JobRuntime, JobSpec
from services.common.wire import SessionCreate
from services.replay.async_store import AsyncStore
from services.replay.memory import MemoryStore
from services.rollout.chat import ChatTokenizer
from services.rollout.checks import problems
from services.rollout.eval import run_eval
from services.rollout.factory import http_deps
from services.rollout.settings import WorkerConfig
from services.rollout.worker import RolloutWorker

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def env_url(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    log = tmp_path_factory.mktemp("logs") / "environments.log"
    with service("environments", environments_env(), log) as url:
        yield url


def make_runtime(model: Path, inference: str, envs: str, tmp: Path, **spec: object) -> JobRuntime:
    body = {
        "model": {"name": str(model), "engine": "hf", "max_model_len": 2048},
        "environments": [{"name": "arithmetic"}],
        "group_size": 2, "batch_size": 4, "max_staleness": 1, "max_turns": 4,
        "sampling": {"max_tokens_per_turn": 48, "max_episode_tokens": 1024},
        "budget": {"max_steps": 1},
        "resources": {"episodes_per_worker": 4},
        "eval": {"num_tasks": 2},
    } | spec
    return JobRuntime(
        job_id="real-job", spec=JobSpec.model_validate(body), run_dir=str(tmp),
        endpoints=Endpoints(inference=inference, environments=envs, reward=None,
                            replay="http://127.0.0.1:9"),
    )


async def session_tools(env_url: str):  # type: ignore[no-untyped-def]
    async with AsyncEnvironmentsClient(env_url) as client:
        info = await client.create_session(SessionCreate(env="arithmetic", seed=0))
        await client.close_session(info.session_id)
        return info.tools


async def run_worker_until(runtime: JobRuntime, store: AsyncStore, groups: int) -> list:
    config = WorkerConfig(admission_poll_s=0.01)
    async with http_deps(runtime, config) as deps:
        deps.replay = store  # the real in-process store instead of a replay service
        worker = RolloutWorker(runtime, deps, config)
        task = asyncio.create_task(worker.run())
        deadline = time.monotonic() + 240
        while (await store.stats(runtime.job_id)).complete_groups < groups:
            assert time.monotonic() < deadline and not task.done()
            await asyncio.sleep(0.2)
        worker.stop()
        outcome = await task
    page = await store.trajectories(runtime.job_id, limit=100)
    return [outcome, page.items]


def test_episodes_against_real_services(tiny_model_path: Path, env_url: str, tmp_path: Path
                                        ) -> None:
    chat = ChatTokenizer.from_pretrained(str(tiny_model_path))
    with service("services.inference", inference_env(tiny_model_path),
                 tmp_path / "inference.log") as inference:
        runtime = make_runtime(tiny_model_path, inference, env_url, tmp_path)
        store = AsyncStore(MemoryStore(), poll_interval_s=0.01)
        outcome, trajs = asyncio.run(run_worker_until(runtime, store, groups=2))
        tools = asyncio.run(session_tools(env_url))
        assert outcome.reason == "stopped" and outcome.failures == 0
        assert len(trajs) >= 4
        for traj in trajs:
            assert problems(chat, traj, tools) == [], traj.trajectory_id
            assert traj.status in {"ok", "truncated"} and traj.num_model_tokens > 0
            assert traj.env == "arithmetic" and traj.task_type == "arithmetic"
            assert traj.metadata.get("verifier") == "arithmetic" and traj.reward_error is None
        evaluation = asyncio.run(run_eval(runtime, version=0, num_tasks=2))
        assert evaluation.num_tasks == 2 and 0.0 <= evaluation.mean_reward <= 1.0
        assert all(t.metadata["split"] == "eval" for t in evaluation.trajectories)
        assert asyncio.run(store.stats(runtime.job_id)).depth == len(trajs)  # eval not pushed


def test_worker_process_sigterm_exits_zero(tiny_model_path: Path, env_url: str,
                                           tmp_path: Path) -> None:
    """`python -m services.rollout worker --runtime FILE` against real services and a real
    replay service; SIGTERM aborts in-flight episodes, gives the slots back, exits 0."""
    replay_log = tmp_path / "replay.log"
    with service("services.inference", inference_env(tiny_model_path),
                 tmp_path / "inference.log") as inference, \
            service("services.replay", {}, replay_log) as replay:
        runtime = make_runtime(tiny_model_path, inference, env_url, tmp_path,
                               budget={"max_steps": 50})
        runtime.endpoints.replay = replay
        path = tmp_path / "runtime.json"
        path.write_text(runtime.model_dump_json())
        proc = subprocess.Popen(
            [sys.executable, "-m", "services.rollout", "worker", "--runtime", str(path)],
            cwd=ROOT,
        )
        from services.replay.client import ReplayClient

        with ReplayClient(replay) as client:
            deadline = time.monotonic() + 240
            while client.stats("real-job").complete_groups < 1:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.3)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(60) == 0
            stats = client.stats("real-job")
        assert stats.started == stats.depth  # in-flight episodes gave their slots back
        outcome = json.loads((tmp_path / "rollout-worker-0.json").read_text())
        assert outcome["reason"] == "stopped" and outcome["exit_code"] == 0


@pytest.fixture(scope="module")
def scripted_model(tiny_model_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from scripted_model import build_scripted_model

    return build_scripted_model(tiny_model_path, tmp_path_factory.mktemp("scripted-model"))


def test_multi_turn_episodes_against_real_services(
    scripted_model: Path, env_url: str, tmp_path: Path
) -> None:
    """A model that calls calculate(6*7) every turn: real multi-turn episodes (the env's
    turn cap ends them), every turn's tokens exactly as sampled by the engine."""
    chat = ChatTokenizer.from_pretrained(str(scripted_model))
    with service("services.inference", inference_env(scripted_model),
                 tmp_path / "inference.log") as inference:
        runtime = make_runtime(scripted_model, inference, env_url, tmp_path,
                               sampling={"max_tokens_per_turn": 64, "max_episode_tokens": 1500})
        store = AsyncStore(MemoryStore(), poll_interval_s=0.01)
        _, trajs = asyncio.run(run_worker_until(runtime, store, groups=1))
    tools = asyncio.run(session_tools(env_url))
    complete = [t for t in trajs if t.group_id == trajs[-1].group_id]
    assert len(complete) == 2
    for traj in complete:
        assert problems(chat, traj, tools) == []
        assert len(traj.turn_spans) == 4 and traj.status == "truncated"
        assert traj.metadata["truncated_by"] == "env_max_turns"
        roles = [m.role for m in traj.messages]
        assert roles == ["system", "user"] + ["assistant", "tool"] * 4
        for message in traj.messages[2::2]:
            assert message.tool_calls[0].name == "calculate"
            assert message.tool_calls[0].arguments == {"expression": "6*7"}
        assert all(m.content.startswith("42") for m in traj.messages[3::2])
        assert traj.step_keys is not None and len(set(traj.step_keys)) == 4
        for span in traj.turn_spans:  # each model turn ends with its sampled stop token
            assert chat.is_stop(traj.token_ids[span.end - 1])
            assert all(traj.behavior_logprobs[i] <= 0 for i in range(span.start, span.end))
        assert traj.turn_spans[1].start > traj.turn_spans[0].end  # observation in between
