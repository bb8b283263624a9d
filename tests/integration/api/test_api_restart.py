"""Restarting the API process loses no job record, on PostgreSQL and on SQLite; jobs it
was running are failed ("api restarted while running") and their processes stopped."""

from __future__ import annotations

from pathlib import Path

from api_helpers import (
    ApiServer,
    all_gone,
    learner_cmd,
    read_pids,
    runner_config,
    spec,
    wait_for,
    worker_cmd,
)

from services.api import procs
from services.api.client import ApiClient
from services.api.schemas import EventType, JobStatus


def _runner() -> dict:
    # A long-running learner with a grandchild, and workers.
    return runner_config(learner_cmd("--steps", "10000", "--child"), worker_cmd())


def test_api_crash_keeps_records_and_fails_orphaned_jobs(tmp_path: Path, database_url: str) -> None:
    home = tmp_path / "home"
    api = ApiServer(home, database_url, _runner()).start()
    try:
        with ApiClient(api.url, token=api.token) as client:
            long_job = client.submit(spec(name="long"))
            run_dir = home / "runs" / long_job.id
            names = {"learner", "learner-child", "worker-0", "worker-1"}
            pids = wait_for(lambda: names <= set(read_pids(run_dir)) and read_pids(run_dir))
            wait_for(lambda: client.get_job(long_job.id).last_step is not None)
            queued = client.cancel(client.submit(spec(name="never-ran")).id)
            assert queued.status is JobStatus.CANCELLED  # (max_running_jobs=1: it queued)
            before = client.get_job(long_job.id)
            assert before.status is JobStatus.RUNNING
        api.kill()  # SIGKILL: no shutdown hook runs
        assert procs.pid_alive(pids["learner"])  # the job's processes outlived the API

        api = ApiServer(home, database_url, _runner()).start()
        with ApiClient(api.url, token=api.token) as client:
            after = client.get_job(long_job.id)
            assert after.status is JobStatus.FAILED
            assert (after.failure_reason or "").startswith("api restarted while running")
            assert after.spec == before.spec and after.created_at == before.created_at
            assert after.last_step is not None and len(client.metrics(long_job.id).points) >= 1
            assert all_gone(pids)
            assert client.get_job(queued.id).status is JobStatus.CANCELLED
            page = client.list_jobs()
            assert {j.id for j in page.items} == {long_job.id, queued.id}
            statuses = [
                e.data["status"] for e in client.events(long_job.id) if e.type is EventType.STATUS
            ]
            assert statuses == ["queued", "starting", "running", "failed"]
    finally:
        api.kill()


def test_graceful_stop_fails_running_jobs_and_keeps_them(tmp_path: Path, database_url: str) -> None:
    home = tmp_path / "home"
    api = ApiServer(home, database_url, _runner()).start()
    try:
        with ApiClient(api.url, token=api.token) as client:
            job = client.submit(spec(resources={"rollout_workers": 1}))
            run_dir = home / "runs" / job.id
            pids = wait_for(
                lambda: {"learner", "worker-0"} <= set(read_pids(run_dir)) and read_pids(run_dir)
            )
        api.stop()  # SIGTERM: the lifespan stops the job's processes
        assert all_gone(pids)
        api = ApiServer(home, database_url, _runner()).start()
        with ApiClient(api.url, token=api.token) as client:
            stopped = client.get_job(job.id)
        assert stopped.status is JobStatus.FAILED
        assert (stopped.failure_reason or "").startswith("api stopped while running")
        assert stopped.finished_at is not None and stopped.started_at is not None
    finally:
        api.stop()
