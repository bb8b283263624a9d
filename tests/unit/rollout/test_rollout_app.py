"""The rollout service: start, list and stop a job's workers in-process; /metrics."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpx

from services.common.jobspec import JobRuntime, JobSpec
from services.replay.async_store import AsyncStore
from services.replay.memory import MemoryStore
from services.rollout.app import create_app
from services.rollout.settings import RolloutSettings, WorkerConfig
from services.rollout.sim import EnvRewardOnly, PolicyClock, SimEnvs, SimRunner
from services.rollout.worker import WorkerDeps

REPLAY = AsyncStore(MemoryStore(), poll_interval_s=0.005)


@contextlib.asynccontextmanager
async def sim_deps(runtime: JobRuntime, config: WorkerConfig) -> AsyncIterator[WorkerDeps]:
    yield WorkerDeps(replay=REPLAY, runner=SimRunner(PolicyClock(), lambda: 0.02, turns=1),
                     scorer=EnvRewardOnly(), envs=SimEnvs())


def runtime_body(index: int = 0) -> dict:
    spec = JobSpec.model_validate({"environments": [{"name": "sim"}], "group_size": 2,
                                   "batch_size": 4, "max_staleness": 1})
    return JobRuntime(job_id="app-job", spec=spec, run_dir="/tmp",
                      worker_index=index).model_dump(mode="json")


async def test_start_list_stop_workers() -> None:
    app = create_app(RolloutSettings(), deps_factory=sim_deps)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        r = await client.post("/v1/jobs/app-job/workers", json=runtime_body())
        assert r.status_code == 201 and r.json()["worker_index"] == 0
        again = await client.post("/v1/jobs/app-job/workers", json=runtime_body())
        assert again.status_code == 409
        wrong = await client.post("/v1/jobs/other/workers", json=runtime_body(1))
        assert wrong.status_code == 400
        await client.post("/v1/jobs/app-job/workers", json=runtime_body(1))
        await asyncio.sleep(0.4)
        workers = (await client.get("/v1/workers")).json()["workers"]
        assert [w["state"] for w in workers] == ["running", "running"]
        assert sum(w["episodes"] for w in workers) == 8  # (0 + 1 + 1) * 4 admitted
        metrics = (await client.get("/metrics")).text
        assert 'slipstream_rollout_episodes_total{job="app-job",status="ok"} 8.0' in metrics
        assert "slipstream_rollout_admission_wait_seconds" in metrics
        stopped = (await client.delete("/v1/jobs/app-job/workers")).json()["workers"]
        assert {w["exit_reason"] for w in stopped} == {"stopped"}
        assert (await client.delete("/v1/jobs/nope/workers")).status_code == 404
        listed = (await client.get("/v1/jobs/app-job/workers")).json()["workers"]
        assert [w["state"] for w in listed] == ["exited", "exited"]
