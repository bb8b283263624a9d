"""The api server for real: `python -m services.api`, real subprocesses for the job's
learner and workers (small scripts standing in for them), SQLite file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
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
from sqlalchemy import select

from services.api.auth import Forbidden, Unauthorized
from services.api.client import ApiClient, AsyncApiClient
from services.api.db import open_database
from services.api.models import Token
from services.api.schemas import EventType, JobStatus
from services.api.tokens import create_token
from services.common.errors import BadRequest
from services.common.jobspec import JobRuntime
from services.common.wire import MetricPoint


def _server(tmp_path: Path, learner: list[str], worker: list[str]) -> ApiServer:
    url = f"sqlite:///{tmp_path / 'slipstream.db'}"
    return ApiServer(tmp_path / "home", url, runner_config(learner, worker)).start()


@pytest.fixture
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[ApiServer]:
    learner, worker = request.param
    api = _server(tmp_path, learner, worker)
    try:
        yield api
    finally:
        api.stop()


def _client(api: ApiServer) -> ApiClient:
    return ApiClient(api.url, token=api.token)


def _final(client: ApiClient, job_id: str) -> JobStatus:
    return wait_for(lambda: client.get_job(job_id).status.terminal and client.get_job(job_id))


@pytest.mark.parametrize(
    "server", [(learner_cmd("--steps", "3", "--child"), worker_cmd())], indirect=True
)
def test_learner_exit_0_completes_and_stops_every_worker(server: ApiServer) -> None:
    with _client(server) as client:
        job = client.submit(spec())
        final = _final(client, job.id)
        assert final.status is JobStatus.COMPLETED, final.failure_reason
        run_dir = Path(final.run_dir or "")
        pids = read_pids(run_dir)
        assert {"learner", "learner-child", "worker-0", "worker-1", "worker-0-child"} <= set(pids)
        assert all_gone(pids)
        points = client.metrics(job.id).points
        assert [p.step for p in points] == [0, 1, 2]
        assert final.last_step == 2 and final.last_metrics["loss"] == pytest.approx(1 / 3)
        runtime = JobRuntime.model_validate_json((run_dir / "runtime-worker-1.json").read_text())
        assert runtime.worker_index == 1 and runtime.job_id == job.id
        assert runtime.endpoints.api == server.url
        assert "step 2" in (run_dir / "logs" / "learner.log").read_text()
        assert final.processes[0].role == "learner" and final.processes[0].returncode == 0
    db = open_database(server.env["SLIPSTREAM_API_DATABASE_URL"], migrate=False)
    with db.session() as session:
        job_tokens = list(session.scalars(select(Token).where(Token.job_id == job.id)))
    db.dispose()
    assert job_tokens and all(t.revoked_at is not None for t in job_tokens)


@pytest.mark.parametrize(
    "server",
    [(learner_cmd("--steps", "500"), worker_cmd("--exit-after", "0.5", "--exit", "3"))],
    indirect=True,
)
def test_failing_worker_fails_the_job_with_its_log(server: ApiServer) -> None:
    with _client(server) as client:
        job = client.submit(spec(resources={"rollout_workers": 1}))
        final = _final(client, job.id)
        assert final.status is JobStatus.FAILED
        reason = final.failure_reason or ""
        assert reason.startswith("worker-0 exited with code 3"), reason
        assert "environment exploded" in reason
        assert all_gone(read_pids(Path(final.run_dir or "")))


@pytest.mark.parametrize(
    "server",
    [(learner_cmd("--steps", "10000", "--child"), worker_cmd("--ignore-term"))],
    indirect=True,
)
def test_cancel_leaves_no_process_behind(server: ApiServer) -> None:
    with _client(server) as client:
        job = client.submit(spec())
        run_dir = server.home / "runs" / job.id
        names = {"learner", "learner-child", "worker-0", "worker-0-child", "worker-1"}
        pids = wait_for(lambda: names <= set(read_pids(run_dir)) and read_pids(run_dir))
        assert not all_gone(pids)
        cancelled = client.cancel(job.id)
        assert cancelled.status is JobStatus.CANCELLED
        assert cancelled.cancel_requested
        assert all_gone(read_pids(run_dir))  # workers ignored SIGTERM: SIGKILL got them
        assert client.cancel(job.id).status is JobStatus.CANCELLED  # idempotent


@pytest.mark.parametrize(
    "server", [(learner_cmd("--steps", "4", "--step-s", "0.3"), worker_cmd())], indirect=True
)
def test_event_stream_delivers_status_metrics_and_logs(server: ApiServer) -> None:
    with _client(server) as client:
        job = client.submit(spec(resources={"rollout_workers": 1}))
        events = list(client.events(job.id))  # follows until the final status
    statuses = [e.data["status"] for e in events if e.type is EventType.STATUS]
    assert statuses == ["queued", "starting", "running", "completed"]
    steps = [p["step"] for e in events if e.type is EventType.METRICS for p in e.data["points"]]
    assert steps == [0, 1, 2, 3]
    log_lines = [line for e in events if e.type is EventType.LOG for line in e.data["lines"]]
    assert any("step 3" in line for line in log_lines)
    assert [e.id for e in events] == sorted(e.id for e in events)
    with _client(server) as client:  # resuming after an id replays only the rest
        rest = list(client.events(job.id, after=events[-2].id))
    assert [e.id for e in rest] == [events[-1].id]


@pytest.mark.parametrize(
    "server",
    [(["{python}", "-c", "raise SystemExit('no learner here')"], worker_cmd())],
    indirect=True,
)
def test_dashboard_and_ops_routes_need_no_token(server: ApiServer) -> None:
    import httpx

    page = httpx.get(server.url + "/dashboard")
    assert page.status_code == 200 and "<svg" in page.text and "localStorage" in page.text
    assert "http://" not in page.text.replace("http://www.w3.org/2000/svg", "")
    assert httpx.get(server.url + "/healthz").status_code == 200
    assert "slipstream_api_http_requests_total" in httpx.get(server.url + "/metrics").text
    assert httpx.get(server.url + "/v1/jobs").status_code == 401
    with ApiClient(server.url, token="slp_wrong") as client, pytest.raises(Unauthorized):
        client.list_jobs()
    reader = create_token(server.env["SLIPSTREAM_API_DATABASE_URL"], "reader", "read")
    with ApiClient(server.url, token=reader) as client:
        with pytest.raises(Forbidden):
            client.submit(spec())
        with pytest.raises(BadRequest, match="bach_size"):
            ApiClient(server.url, token=server.token).submit(spec(bach_size=3))
        assert client.list_jobs().total == 0


@pytest.mark.parametrize("server", [(learner_cmd("--steps", "2"), worker_cmd())], indirect=True)
async def test_async_client_follows_a_job(server: ApiServer) -> None:
    async with AsyncApiClient(server.url, token=server.token) as client:
        job = await client.submit(spec(resources={"rollout_workers": 1}))
        statuses = [e.data["status"] async for e in client.events(job.id) if e.type == "status"]
        assert statuses[-1] == "completed"
        final = await client.wait(job.id)
        assert final.status is JobStatus.COMPLETED
        assert [p.step for p in (await client.metrics(job.id, kind="train")).points] == [0, 1]
        page = await client.list_jobs(status=["completed"])
        assert [j.id for j in page.items] == [job.id]
        point = MetricPoint(job_id=job.id, step=9, kind="eval", values={"eval_reward": 0.5})
        assert await client.post_metrics(job.id, [point]) == 1  # admin may post too
        assert (await client.metrics(job.id, since_step=5)).points[0].values["eval_reward"] == 0.5


@pytest.mark.parametrize(
    "server", [(learner_cmd("--steps", "1000"), ["/nonexistent/rollout-worker"])], indirect=True
)
def test_a_process_that_cannot_start_fails_the_job(server: ApiServer) -> None:
    with _client(server) as client:
        job = client.submit(spec(resources={"rollout_workers": 1}))
        final = _final(client, job.id)
        assert final.status is JobStatus.FAILED
        assert "could not start the job" in (final.failure_reason or "")
        assert "/nonexistent/rollout-worker" in (final.failure_reason or "")
        pids = read_pids(Path(final.run_dir or server.home / "runs" / job.id))
        assert all_gone(pids)  # the learner that did start was stopped again
