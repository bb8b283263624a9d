"""Bad requests are 422s whose message and `field` name the offending path."""

from __future__ import annotations

import pytest
from api_unit_helpers import Api

GOOD = {"environments": [{"name": "arithmetic"}]}


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({**GOOD, "algorithm": {"learnin_rate": 1e-5}}, "algorithm.learnin_rate", "unknown key"),
        ({**GOOD, "bach_size": 8}, "bach_size", "unknown key 'bach_size'"),
        ({"environments": [{"name": "arithmetic", "wieght": 2}]}, "environments[0].wieght", ""),
        ({**GOOD, "group_size": 0}, "group_size", "greater than or equal to 1"),
        ({**GOOD, "model": {"engine": "tgi"}}, "model.engine", "'vllm' or 'hf'"),
        ({}, "environments", "Field required"),
        ({**GOOD, "group_size": 3, "batch_size": 8}, "(root)", "multiple of group_size"),
    ],
)
def test_spec_errors_name_the_field(api: Api, body: dict, field: str, words: str) -> None:
    response = api.client.post("/v1/jobs", json=body, headers=api.auth("writer"))
    assert response.status_code == 422, response.text
    error = response.json()
    assert error["error"] == "invalid"
    assert error["field"] == field
    assert field in error["message"] and words in error["message"]


def test_every_problem_is_listed(api: Api) -> None:
    body = {**GOOD, "seeed": 1, "sampling": {"top_p": 2}}
    message = api.client.post("/v1/jobs", json=body, headers=api.auth("writer")).json()["message"]
    assert "seeed" in message and "sampling.top_p" in message


def test_non_object_bodies_are_422(api: Api) -> None:
    for body in ([1, 2], "spec", None):
        response = api.client.post("/v1/jobs", json=body, headers=api.auth("writer"))
        assert response.status_code == 422, body
    broken = api.client.post(
        "/v1/jobs",
        content=b"{not json",
        headers={**api.auth("writer"), "content-type": "application/json"},
    )
    assert broken.status_code == 422 and broken.json()["error"] == "invalid"


def test_query_parameters_are_checked(api: Api) -> None:
    bad = api.client.get("/v1/jobs?status=sleeping", headers=api.auth("reader"))
    assert bad.status_code == 422 and bad.json()["field"] == "status[0]"
    assert api.client.get("/v1/jobs?limit=0", headers=api.auth("reader")).json()["field"] == "limit"


def test_metric_points_must_belong_to_the_job(api: Api) -> None:
    job = api.submit()
    path = f"/v1/jobs/{job['id']}/metrics"
    stray = [{"job_id": "elsewhere", "step": 1, "values": {"loss": 1.0}}]
    response = api.client.post(path, json=stray, headers=api.auth("internal"))
    assert response.status_code == 422 and response.json()["field"] == "[0].job_id"
    typo = [{"job_id": job["id"], "step": 1, "valuez": {}}]
    response = api.client.post(path, json=typo, headers=api.auth("internal"))
    assert response.status_code == 422 and "valuez" in response.json()["message"]


def test_unknown_job_is_404(api: Api) -> None:
    for path in ("/v1/jobs/nope", "/v1/jobs/nope/metrics", "/v1/jobs/nope/events"):
        response = api.client.get(path, headers=api.auth("reader"))
        assert response.status_code == 404 and response.json()["field"] == "job_id", path
