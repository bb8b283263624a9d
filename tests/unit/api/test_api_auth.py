"""Every /v1 route needs a bearer token: 401 without a valid one, 403 without the scope."""

from __future__ import annotations

import stat

import httpx
import pytest
from api_unit_helpers import Api, make_api
from fastapi.testclient import TestClient

from services.api.auth import Forbidden, Unauthorized
from services.api.client import _check as client_check
from services.api.tokens import (
    Scope,
    add_token,
    bootstrap_token,
    create_token,
    find_token,
    hash_token,
    revoke_token,
)

ROUTES = [
    ("GET", "/v1/jobs"),
    ("POST", "/v1/jobs"),
    ("GET", "/v1/jobs/x"),
    ("POST", "/v1/jobs/x/cancel"),
    ("GET", "/v1/jobs/x/metrics"),
    ("POST", "/v1/jobs/x/metrics"),
    ("GET", "/v1/jobs/x/trajectories"),
    ("GET", "/v1/jobs/x/events"),
]


@pytest.mark.parametrize(("method", "path"), ROUTES)
@pytest.mark.parametrize(
    "header", [None, "Bearer slp_not-a-real-token", "Basic dXNlcjpwYXNz", "Bearer "]
)
def test_missing_or_invalid_token_is_401(api: Api, method: str, path: str, header: str) -> None:
    headers = {"Authorization": header} if header else {}
    response = api.client.request(method, path, headers=headers, json={})
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"


def test_ops_routes_and_dashboard_are_open(api: Api) -> None:
    for path in ("/healthz", "/readyz", "/metrics", "/dashboard"):
        assert api.client.get(path).status_code == 200, path


def test_read_only_token_cannot_submit_or_cancel(api: Api) -> None:
    job = api.submit()
    body = {"environments": [{"name": "arithmetic"}]}
    denied = api.client.post("/v1/jobs", json=body, headers=api.auth("reader"))
    assert denied.status_code == 403 and "scope read" in denied.json()["message"]
    cancel = api.client.post(f"/v1/jobs/{job['id']}/cancel", headers=api.auth("reader"))
    assert cancel.status_code == 403
    assert api.client.get(f"/v1/jobs/{job['id']}", headers=api.auth("reader")).status_code == 200


def test_writers_cancel_their_own_jobs_admins_any(api: Api) -> None:
    mine, theirs = api.submit("writer"), api.submit("other_writer")
    denied = api.client.post(f"/v1/jobs/{theirs['id']}/cancel", headers=api.auth("writer"))
    assert denied.status_code == 403 and "does not own" in denied.json()["message"]
    ok = api.client.post(f"/v1/jobs/{mine['id']}/cancel", headers=api.auth("writer"))
    assert ok.status_code == 200 and ok.json()["status"] == "cancelled"
    admin = api.client.post(f"/v1/jobs/{theirs['id']}/cancel", headers=api.auth("admin"))
    assert admin.json()["status"] == "cancelled"
    assert (
        api.client.get(f"/v1/jobs/{mine['id']}", headers=api.auth("admin")).json()["owner"]
        == "writer"
    )


def test_only_job_and_internal_tokens_post_metrics(api: Api) -> None:
    job, other = api.submit(), api.submit()
    job_token = add_token(api.client.app.state.db, "job", Scope.JOB, job_id=job["id"])[1]
    point = {"job_id": job["id"], "step": 0, "values": {"reward_mean": 0.5}}
    path = f"/v1/jobs/{job['id']}/metrics"
    assert api.client.post(path, json=[point], headers=api.auth("writer")).status_code == 403
    assert api.client.post(path, json=[point], headers=api.auth("internal")).status_code == 200
    headers = {"Authorization": f"Bearer {job_token}"}
    assert api.client.post(path, json=[point], headers=headers).status_code == 200
    stray = {**point, "job_id": other["id"]}
    denied = api.client.post(f"/v1/jobs/{other['id']}/metrics", json=[stray], headers=headers)
    assert denied.status_code == 403 and "bound to job" in denied.json()["message"]
    denied = api.client.post("/v1/jobs", json={}, headers=headers)
    assert denied.status_code == 403


def test_revoked_token_is_401(api: Api) -> None:
    db = api.client.app.state.db
    token_id, plaintext = add_token(db, "temp", Scope.READ)
    headers = {"Authorization": f"Bearer {plaintext}"}
    assert api.client.get("/v1/jobs", headers=headers).status_code == 200
    assert revoke_token(db, token_id)
    assert api.client.get("/v1/jobs", headers=headers).status_code == 401


def test_tokens_are_stored_hashed(api: Api) -> None:
    from services.api.tokens import list_tokens

    stored = {t.token_hash for t in list_tokens(api.client.app.state.db)}
    for plaintext in api.tokens.values():
        assert plaintext.startswith("slp_") and plaintext not in stored
        assert hash_token(plaintext) in stored


def test_bootstrap_token_file_is_private_and_written_once(tmp_path) -> None:  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    first = next(make_api(home))
    token_file = home / "token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    plaintext = token_file.read_text().strip()
    assert find_token(first.client.app.state.db, plaintext).scope == "admin"
    # A second start with tokens in the db does not replace it.
    assert not bootstrap_token(first.client.app.state.db, token_file)
    second = make_api(home)
    next(second)
    assert token_file.read_text().strip() == plaintext


def test_create_token_is_what_the_cli_calls(tmp_path) -> None:  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path / 'fresh.db'}"  # an empty db: create_token migrates it
    plaintext = create_token(url, "ci", "read")
    from services.api.db import open_database

    db = open_database(url)
    token = find_token(db, plaintext)
    assert token is not None and token.name == "ci" and token.scope == "read"
    with pytest.raises(ValueError):
        create_token(url, "bad", "superuser")
    db.dispose()


def test_admin_token_setting_registers_a_known_secret(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from services.api.app import create_app
    from services.api.settings import ApiSettings

    settings = ApiSettings(
        home=tmp_path, runner_enabled=False, admin_token="slp_from-a-secret", bootstrap_token=False
    )
    with TestClient(create_app(settings)) as client:
        headers = {"Authorization": "Bearer slp_from-a-secret"}
        assert client.get("/v1/jobs", headers=headers).status_code == 200
    assert not (tmp_path / "token").exists()


def test_client_raises_typed_auth_errors() -> None:
    request = httpx.Request("GET", "http://api/v1/jobs")
    unauthorized = httpx.Response(401, json={"message": "invalid token"}, request=request)
    with pytest.raises(Unauthorized, match="tokens create"):
        client_check(unauthorized)
    forbidden = httpx.Response(403, json={"message": "scope read"}, request=request)
    with pytest.raises(Forbidden, match="scope read"):
        client_check(forbidden)
