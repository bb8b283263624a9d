"""base_app wiring: health, readiness, metrics, typed errors, and the typed client."""

import httpx
import pytest
from fastapi.testclient import TestClient

from services.common.app import base_app
from services.common.client import ServiceClient, ServiceUnavailable
from services.common.errors import NotFound, Overloaded


def _app(ready: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    app = base_app("demo", readiness=lambda: ready or {"db": "ok"})

    @app.get("/v1/things/{thing_id}")
    async def get_thing(thing_id: str) -> dict[str, str]:
        if thing_id == "busy":
            raise Overloaded("queue full")
        raise NotFound(f"no thing {thing_id}", field="thing_id")

    return app


def test_health_ready_and_metrics() -> None:
    client = TestClient(_app())
    assert client.get("/healthz").json() == {"status": "ok", "service": "demo", "checks": {}}
    assert client.get("/readyz").json()["checks"] == {"db": "ok"}
    body = client.get("/metrics").text
    assert 'slipstream_demo_http_requests_total{method="GET",route="/healthz",status="200"}' in body


def test_not_ready_is_503_with_the_failing_check() -> None:
    client = TestClient(_app({"redis": "down: connection refused"}))
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["redis"].startswith("down")


def test_typed_errors_render_and_route_template_labels() -> None:
    client = TestClient(_app())
    response = client.get("/v1/things/42")
    assert response.status_code == 404
    assert response.json() == {"error": "not_found", "message": "no thing 42", "field": "thing_id"}
    busy = client.get("/v1/things/busy")
    assert busy.status_code == 429 and busy.headers["retry-after"] == "1"
    metrics = client.get("/metrics").text
    assert 'route="/v1/things/{thing_id}"' in metrics


def test_client_maps_status_to_typed_error_and_retries_429() -> None:
    calls = {"n": 0}
    client = ServiceClient(
        "http://demo", retries=2, transport=_CountingASGI(_app(), calls)
    )
    with pytest.raises(NotFound, match="no thing 7") as info:
        client._request("GET", "/v1/things/7")
    assert info.value.field == "thing_id"
    assert calls["n"] == 1  # 404 is final: no retry
    with pytest.raises(Overloaded):
        client._request("GET", "/v1/things/busy")
    assert calls["n"] == 1 + 3  # 429 retried twice more


def test_unreachable_service_says_what_to_do() -> None:
    client = ServiceClient("http://127.0.0.1:9", retries=1, timeout=1.0)
    with pytest.raises(ServiceUnavailable, match="slipstream status"):
        client._request("GET", "/healthz")


class _CountingASGI(httpx.BaseTransport):
    """Runs the real app in-process (through Starlette's TestClient) and counts calls."""

    def __init__(self, app, calls: dict[str, int]) -> None:  # type: ignore[no-untyped-def]
        self.client = TestClient(app)
        self.calls = calls

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.calls["n"] += 1
        response = self.client.request(request.method, request.url.path)
        return httpx.Response(
            response.status_code, headers=response.headers, content=response.content,
            request=request,
        )
