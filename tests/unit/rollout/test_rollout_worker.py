"""Worker lifecycle over the real in-process store: budget, finish, stop, failures."""

from __future__ import annotations

import asyncio

from services.common.jobspec import JobRuntime, JobSpec
from services.common.wire import EpisodeError, PolicyPublication, TrajectoryStatus
from services.replay.async_store import AsyncStore
from services.replay.memory import MemoryStore
from services.rollout.episode import EpisodeResult, EpisodeTask
from services.rollout.settings import WorkerConfig
from services.rollout.sim import EnvRewardOnly, PolicyClock, SimEnvs, SimRunner
from services.rollout.worker import RolloutWorker, WorkerDeps, WorkerExit

FAST = WorkerConfig(admission_poll_s=0.005, admission_poll_max_s=0.02)


def runtime(**spec: object) -> JobRuntime:
    body = {"environments": [{"name": "sim"}], "group_size": 2, "batch_size": 4,
            "max_staleness": 0, "budget": {"max_steps": 3}} | spec
    return JobRuntime(job_id="w", spec=JobSpec.model_validate(body), run_dir="/tmp")


def worker(rt: JobRuntime, replay: AsyncStore, runner=None, config=FAST):  # type: ignore[no-untyped-def]
    runner = runner or SimRunner(PolicyClock(), lambda: 0.01, turns=1)
    deps = WorkerDeps(replay=replay, runner=runner, scorer=EnvRewardOnly(), envs=SimEnvs())
    return RolloutWorker(rt, deps, config)


def store() -> AsyncStore:
    return AsyncStore(MemoryStore(), poll_interval_s=0.005)


async def test_admission_caps_and_budget_exit() -> None:
    replay, rt = store(), runtime()
    w = worker(rt, replay)
    task = asyncio.create_task(w.run())
    await asyncio.sleep(0.3)
    stats = await replay.stats("w")
    assert stats.started == 4 and stats.complete_groups == 2  # (0 + 0 + 1) * 4
    groups = stats.complete_groups
    await replay.publish(PolicyPublication(job_id="w", version=3, checkpoint_path="c"))
    outcome = await asyncio.wait_for(task, 5)
    assert outcome.reason == WorkerExit.BUDGET and outcome.exit_code == 0
    assert outcome.groups == groups and outcome.by_status == {"ok": 4}
    page = await replay.trajectories("w")
    assert {t.task_id for t in page.items} <= {f"t{i}" for i in range(64)}
    assert len({t.task_id for t in page.items if t.group_id == page.items[0].group_id}) == 1


async def test_finished_job_stops_workers() -> None:
    replay = store()
    await replay.finish("w", "done by the learner")
    outcome = await asyncio.wait_for(worker(runtime(), replay).run(), 5)
    assert outcome.reason == WorkerExit.FINISHED and outcome.exit_code == 0


async def test_stop_aborts_in_flight_and_gives_slots_back() -> None:
    replay = store()
    w = worker(runtime(), replay, SimRunner(PolicyClock(), lambda: 30.0, turns=1))
    task = asyncio.create_task(w.run())
    await asyncio.sleep(0.2)
    assert (await replay.stats("w")).started == 4 and w.in_flight == 4
    w.stop()
    outcome = await asyncio.wait_for(task, 5)
    assert outcome.reason == WorkerExit.STOPPED and outcome.exit_code == 0
    stats = await replay.stats("w")
    assert stats.started == 0 and stats.depth == 0


class FailingRunner:
    async def run(self, task: EpisodeTask) -> EpisodeResult:
        result = await SimRunner(PolicyClock(), lambda: 0.0, turns=1).run(task)
        result.trajectory.status = TrajectoryStatus.ENV_ERROR
        result.trajectory.error = EpisodeError(kind="env_unavailable", message="no env server")
        return result


async def test_repeated_failures_stop_with_reason() -> None:
    replay = store()
    config = FAST.model_copy(update={"max_consecutive_failures": 6})
    rt = runtime(budget={"max_steps": 100}, max_staleness=4)
    w = worker(rt, replay, FailingRunner(), config)
    task = asyncio.create_task(w.run())
    for version in range(1, 4):  # a learner would move on; the failures are still data
        await asyncio.sleep(0.1)
        await replay.publish(PolicyPublication(job_id="w", version=version, checkpoint_path="c"))
    outcome = await asyncio.wait_for(task, 5)
    assert outcome.reason == WorkerExit.FAILED and outcome.exit_code == 1
    assert "in a row" in outcome.detail and "env_unavailable: no env server" in outcome.detail
    page = await replay.trajectories("w")
    assert page.total >= 2 and all(t.status == "env_error" for t in page.items)
