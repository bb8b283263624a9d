"""`GET /v1/jobs/{id}/trajectories` pages through the real replay service's archive."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
from api_helpers import REPO, ApiServer, free_port, runner_config, spec, wait_for

from services.api.client import ApiClient
from services.common.errors import UpstreamError
from services.common.wire import Trajectory
from services.replay.client import ReplayClient

QUICK = ["{python}", "-c", "pass"]


def _trajectory(job_id: str, i: int) -> Trajectory:
    return Trajectory(
        job_id=job_id,
        task_id=f"task-{i}",
        group_id=f"group-{i}",
        group_size=1,
        env="arithmetic",
        token_ids=[1, 2, 3],
        loss_mask=[0, 1, 1],
        behavior_logprobs=[0.0, -0.1, -0.2],
        policy_versions=[0, 0, 0],
        reward=i / 10,
    )


def test_trajectory_pages_come_from_replay(tmp_path: Path) -> None:
    port = free_port()
    replay_url = f"http://127.0.0.1:{port}"
    replay = subprocess.Popen(
        [sys.executable, "-m", "services.replay", "--port", str(port)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    api = ApiServer(tmp_path, f"sqlite:///{tmp_path / 'db.sqlite'}", runner_config(QUICK, QUICK))
    api.env["SLIPSTREAM_API_ENDPOINTS"] = json.dumps({"replay": replay_url})
    try:
        wait_for(lambda: _up(replay_url), timeout=60)
        api.start()
        with ApiClient(api.url, token=api.token) as client, ReplayClient(replay_url) as rc:
            job = client.submit(spec(resources={"rollout_workers": 1}))
            rc.put_many([_trajectory(job.id, i) for i in range(5)])
            page = client.trajectories(job.id, offset=1, limit=2)
            assert page.total == 5 and page.offset == 1 and len(page.items) == 2
            assert all(t.job_id == job.id for t in page.items)
            replay.terminate()
            replay.wait(timeout=30)
            try:
                client.trajectories(job.id)
            except UpstreamError as exc:
                assert "trajectories" in str(exc)
            else:
                raise AssertionError("a dead replay service must be a 502")
    finally:
        api.stop()
        if replay.poll() is None:
            replay.kill()
            replay.wait()


def _up(url: str) -> bool:
    try:
        return httpx.get(url + "/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False
