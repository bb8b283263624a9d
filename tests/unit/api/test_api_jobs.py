"""Jobs, metric series, trajectories and events through the HTTP API (no runner)."""

from __future__ import annotations

from pathlib import Path

from api_unit_helpers import Api
from fastapi.testclient import TestClient

from services.api.app import create_app
from services.api.client import SseParser
from services.api.schemas import EventType, JobInfo
from services.api.settings import ApiSettings
from services.common.wire import Trajectory
from services.replay.schemas import TrajectoryPage


def test_submit_get_and_list_with_paging_and_filter(api: Api) -> None:
    ids = [api.submit(name=f"job-{i}")["id"] for i in range(5)]
    first = JobInfo.model_validate(
        api.client.get(f"/v1/jobs/{ids[0]}", headers=api.auth("reader")).json()
    )
    assert first.status == "queued" and first.name == "job-0" and first.owner == "writer"
    assert first.spec.environments[0].name == "arithmetic"
    api.client.post(f"/v1/jobs/{ids[1]}/cancel", headers=api.auth("writer"))
    page = api.client.get("/v1/jobs?limit=2&offset=1", headers=api.auth("reader")).json()
    assert page["total"] == 5 and [j["id"] for j in page["items"]] == [ids[3], ids[2]]
    queued = api.client.get("/v1/jobs?status=queued", headers=api.auth("reader")).json()
    assert queued["total"] == 4 and ids[1] not in {j["id"] for j in queued["items"]}
    both = api.client.get(
        "/v1/jobs?status=queued&status=cancelled", headers=api.auth("reader")
    ).json()
    assert both["total"] == 5


def test_cancel_of_a_finished_job_is_409(api: Api) -> None:
    job = api.submit()
    store = api.client.app.state.store
    from services.api.schemas import JobStatus

    assert store.transition(job["id"], [JobStatus.QUEUED], JobStatus.COMPLETED)
    response = api.client.post(f"/v1/jobs/{job['id']}/cancel", headers=api.auth("writer"))
    assert response.status_code == 409 and "already completed" in response.json()["message"]


def test_metrics_time_series_filters(api: Api) -> None:
    job = api.submit()
    path = f"/v1/jobs/{job['id']}/metrics"
    points = [
        {"job_id": job["id"], "step": s, "kind": "train", "values": {"reward_mean": s / 10}}
        for s in range(5)
    ] + [{"job_id": job["id"], "step": 4, "kind": "eval", "values": {"eval_reward": 0.7}}]
    accepted = api.client.post(path, json=points, headers=api.auth("internal")).json()
    assert accepted == {"accepted": 6}
    series = api.client.get(path, headers=api.auth("reader")).json()["points"]
    assert [p["step"] for p in series] == [0, 1, 2, 3, 4, 4]
    evals = api.client.get(path + "?kind=eval", headers=api.auth("reader")).json()["points"]
    assert evals == [{**points[-1], "ts": evals[0]["ts"]}]
    late = api.client.get(path + "?kind=train&since_step=3", headers=api.auth("reader")).json()
    assert [p["step"] for p in late["points"]] == [3, 4]
    info = api.client.get(f"/v1/jobs/{job['id']}", headers=api.auth("reader")).json()
    assert info["last_step"] == 4 and info["last_metrics"] == {"reward_mean": 0.4}


def test_events_replay_history_without_follow(api: Api) -> None:
    job = api.submit()
    api.client.post(
        f"/v1/jobs/{job['id']}/metrics",
        json=[{"job_id": job["id"], "step": 0, "values": {"loss": 2.0}}],
        headers=api.auth("internal"),
    )
    api.client.post(f"/v1/jobs/{job['id']}/cancel", headers=api.auth("writer"))
    response = api.client.get(f"/v1/jobs/{job['id']}/events", headers=api.auth("reader"))
    assert response.headers["content-type"].startswith("text/event-stream")
    parser = SseParser()
    events = [e for line in response.text.splitlines() if (e := parser.feed(line))]
    assert [e.type for e in events] == [EventType.STATUS, EventType.METRICS, EventType.STATUS]
    assert events[-1].data == {"status": "cancelled", "reason": "cancelled by request"}
    assert "id: " in response.text and "event: metrics" in response.text
    resumed = api.client.get(
        f"/v1/jobs/{job['id']}/events",
        headers={**api.auth("reader"), "Last-Event-ID": str(events[0].id)},
    )
    parser = SseParser()
    again = [e for line in resumed.text.splitlines() if (e := parser.feed(line))]
    assert [e.id for e in again] == [e.id for e in events[1:]]


class _FakeReplay:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    async def page(self, job_id: str, offset: int, limit: int) -> TrajectoryPage:
        self.calls.append((job_id, offset, limit))
        item = Trajectory(
            job_id=job_id,
            task_id="t1",
            group_id="g1",
            group_size=1,
            env="arithmetic",
            token_ids=[1, 2],
            loss_mask=[0, 1],
            behavior_logprobs=[0.0, -0.5],
            policy_versions=[0, 0],
        )
        return TrajectoryPage(items=[item], total=7, offset=offset)

    async def aclose(self) -> None:
        pass


def test_trajectories_are_proxied_from_replay(tmp_path: Path) -> None:
    replay = _FakeReplay()
    app = create_app(ApiSettings(home=tmp_path, runner_enabled=False), trajectory_source=replay)
    with TestClient(app) as client:
        headers = {"Authorization": f"Bearer {(tmp_path / 'token').read_text().strip()}"}
        job = client.post("/v1/jobs", json={"environments": [{"name": "a"}]}, headers=headers)
        job_id = job.json()["id"]
        page = client.get(f"/v1/jobs/{job_id}/trajectories?offset=5&limit=3", headers=headers)
        assert page.status_code == 200
        assert page.json()["total"] == 7 and page.json()["items"][0]["task_id"] == "t1"
        assert replay.calls == [(job_id, 5, 3)]
        assert client.get("/v1/jobs/zz/trajectories", headers=headers).status_code == 404


def test_unreachable_replay_is_a_502(tmp_path: Path) -> None:
    from services.common.jobspec import Endpoints

    settings = ApiSettings(
        home=tmp_path,
        runner_enabled=False,
        endpoints=Endpoints(replay="http://127.0.0.1:9"),
        replay_timeout_s=2,
    )
    with TestClient(create_app(settings)) as client:
        headers = {"Authorization": f"Bearer {(tmp_path / 'token').read_text().strip()}"}
        job_id = client.post(
            "/v1/jobs", json={"environments": [{"name": "a"}]}, headers=headers
        ).json()["id"]
        response = client.get(f"/v1/jobs/{job_id}/trajectories", headers=headers)
        assert response.status_code == 502, response.text


def test_a_spec_stored_under_an_older_schema_stays_readable(api: Api) -> None:
    from sqlalchemy import update

    from services.api.models import Job

    job = api.submit(name="old")
    with api.client.app.state.db.session() as session:
        old_spec = {**job["spec"], "retired_option": True}
        session.execute(update(Job).where(Job.id == job["id"]).values(spec=old_spec))
        session.commit()
    response = api.client.get(f"/v1/jobs/{job['id']}", headers=api.auth("reader"))
    assert response.status_code == 200 and response.json()["name"] == "old"
    assert api.client.get("/v1/jobs", headers=api.auth("reader")).status_code == 200
