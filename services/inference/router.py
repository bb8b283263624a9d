"""The inference router: one endpoint in front of several inference replicas.

- Least outstanding requests, sticky by `episode_id` (body field or `X-Episode-Id` header)
  so an episode's turns reuse one replica's prefix cache.
- Health checks (`/v1/status`) in the background; a replica that fails a request is marked
  down at once. Fail-over: a request whose replica dies before answering is retried once on
  another replica; a stream that already sent data ends with an error event. Otherwise a
  clear 502/503, and every call has a timeout: nothing hangs.
- Version-aware: it knows each replica's policy version (`/v1/replicas`); `/v1/weights`,
  `/v1/pause` and `/v1/resume` fan out to every replica.

Run: `python -m services.inference router --replicas URL,URL` (or settings env vars
`SLIPSTREAM_INFERENCE_ROUTER_*`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import Field

from services.common.app import base_app
from services.common.errors import NotReady, UpstreamError
from services.common.metrics import Metrics
from services.common.settings import ServiceSettings, service_settings_config
from services.common.wire import WeightUpdate, WeightUpdateResult
from services.inference.replicas import Replica, ReplicaPool

PROXIED = ("/v1/generate", "/v1/chat/completions", "/v1/completions")
_RETRYABLE = (httpx.TransportError,)  # connect/read failures: the replica died or is gone
_RETRY_STATUSES = {502, 503}


class RouterSettings(ServiceSettings):
    model_config = service_settings_config("inference_router")
    service_name: ClassVar[str] = "inference-router"

    port: int = Field(8005, ge=0, le=65535, description="TCP port the router listens on.")
    replicas: list[str] = Field(
        default_factory=list, description="Base URLs of the inference replicas (JSON list)."
    )
    health_interval_s: float = Field(2.0, gt=0, description="Seconds between health checks.")
    health_timeout_s: float = Field(2.0, gt=0, description="Timeout of one health check.")
    connect_timeout_s: float = Field(3.0, gt=0, description="Timeout to connect to a replica.")
    request_timeout_s: float = Field(
        600.0, gt=0, description="Longest a proxied request may take (read timeout)."
    )
    retries: int = Field(1, ge=0, le=3, description="Retries on another replica on failure.")


class Router:
    def __init__(self, settings: RouterSettings, metrics: Metrics) -> None:
        self.settings = settings
        self.pool = ReplicaPool(settings.replicas)
        self.http = httpx.AsyncClient(
            timeout=httpx.Timeout(settings.request_timeout_s, connect=settings.connect_timeout_s),
            limits=httpx.Limits(max_connections=1024, max_keepalive_connections=256),
        )
        self.m_retries = metrics.counter("retries_total", "Requests retried elsewhere.")
        self.m_failures = metrics.counter("replica_failures_total", "Failed calls.", ["replica"])
        self.m_outstanding = metrics.gauge("outstanding", "Outstanding requests.", ["replica"])
        self.m_version = metrics.gauge("replica_version", "Policy version.", ["replica"])
        self.m_healthy = metrics.gauge("replica_healthy", "1 if healthy.", ["replica"])

    def observe(self) -> None:
        for r in self.pool.replicas:
            self.m_outstanding.labels(r.url).set(r.outstanding)
            self.m_version.labels(r.url).set(r.version if r.version is not None else -1)
            self.m_healthy.labels(r.url).set(float(r.healthy))

    def readiness(self) -> dict[str, str]:
        healthy = len(self.pool.healthy())
        return {"replicas": "ok" if healthy else f"0 of {len(self.pool.replicas)} healthy"}

    # ----------------------------------------------------------------- proxying

    def _pick(self, episode_id: str | None, tried: set[str]) -> Replica:
        replica = self.pool.pick(episode_id, exclude=tried)
        if replica is None:
            detail = "; ".join(f"{r.url}: {r.last_error or r.state}" for r in self.pool.replicas)
            if tried:
                raise UpstreamError(
                    f"request failed on {sorted(tried)}, no replica left ({detail})"
                )
            raise NotReady(f"no healthy inference replica ({detail or 'none configured'})")
        return replica

    async def forward(self, path: str, body: bytes, headers: dict[str, str]) -> Response:
        episode_id = _episode_id(body, headers)
        tried: set[str] = set()
        while True:
            replica = self._pick(episode_id, tried)
            tried.add(replica.url)
            replica.outstanding += 1
            try:
                response = await self.http.post(replica.url + path, content=body, headers=headers)
            except _RETRYABLE as exc:
                self._failed(replica, exc)
                if len(tried) > self.settings.retries:
                    raise UpstreamError(f"{replica.url}{path} failed: {exc!r}") from exc
                self.m_retries.inc()
                continue
            finally:
                replica.outstanding -= 1
            if response.status_code in _RETRY_STATUSES and len(tried) <= self.settings.retries:
                self.pool.mark_failed(replica, f"HTTP {response.status_code}")
                self.m_retries.inc()
                continue
            return _relay(response, replica, path)

    async def forward_stream(self, path: str, body: bytes, headers: dict[str, str]) -> Response:
        """Open the upstream stream (with fail-over until the first byte), then relay it."""
        episode_id = _episode_id(body, headers)
        tried: set[str] = set()
        while True:
            replica = self._pick(episode_id, tried)
            tried.add(replica.url)
            request = self.http.build_request("POST", replica.url + path, content=body,
                                              headers=headers)
            replica.outstanding += 1
            try:
                upstream = await self.http.send(request, stream=True)
            except _RETRYABLE as exc:
                replica.outstanding -= 1
                self._failed(replica, exc)
                if len(tried) > self.settings.retries:
                    raise UpstreamError(f"{replica.url}{path} failed: {exc!r}") from exc
                self.m_retries.inc()
                continue
            if upstream.status_code >= 400:
                content = await upstream.aread()
                await upstream.aclose()
                replica.outstanding -= 1
                return Response(content, upstream.status_code,
                                media_type=upstream.headers.get("content-type"))
            return StreamingResponse(self._relay_stream(upstream, replica),
                                     media_type="text/event-stream")

    async def _relay_stream(self, upstream: httpx.Response, replica: Replica
                            ) -> AsyncIterator[bytes]:
        try:
            async for piece in upstream.aiter_raw():
                yield piece
        except httpx.HTTPError as exc:
            self._failed(replica, exc)
            error = {"error": "upstream", "message": f"replica {replica.url} failed mid-stream"}
            yield f"data: {json.dumps(error)}\n\n".encode()
        finally:
            replica.outstanding -= 1
            await upstream.aclose()

    def _failed(self, replica: Replica, exc: BaseException) -> None:
        self.m_failures.labels(replica.url).inc()
        self.pool.mark_failed(replica, f"{type(exc).__name__}: {exc}")

    # ------------------------------------------------------------------ fan-out

    async def fan_out(self, path: str, payload: dict[str, Any] | None, timeout: float
                      ) -> list[tuple[Replica, dict[str, Any] | None, str | None]]:
        async def one(replica: Replica) -> tuple[Replica, dict[str, Any] | None, str | None]:
            try:
                response = await self.http.post(replica.url + path, json=payload, timeout=timeout)
                if response.is_error:
                    return replica, None, f"HTTP {response.status_code}: {response.text[:300]}"
                return replica, response.json(), None
            except httpx.HTTPError as exc:
                return replica, None, f"{type(exc).__name__}: {exc}"

        return await asyncio.gather(*(one(r) for r in self.pool.replicas))

    async def load_weights(self, update: WeightUpdate) -> WeightUpdateResult:
        results = await self.fan_out(
            "/v1/weights", update.model_dump(mode="json"), update.timeout_s + 30
        )
        errors, versions, seconds = [], [], [0.0]
        for replica, body, error in results:
            if body is not None:
                result = WeightUpdateResult.model_validate(body)
                replica.version = result.version
                versions.append(result.version)
                seconds.append(result.load_seconds)
                error = None if result.loaded else result.error
            if error is not None:
                errors.append(f"{replica.url}: {error}")
        return WeightUpdateResult(
            version=min(versions) if versions else 0,
            loaded=not errors,
            load_seconds=max(seconds),
            error="; ".join(errors) or None,
        )


def _episode_id(body: bytes, headers: dict[str, str]) -> str | None:
    if headers.get("x-episode-id"):
        return headers["x-episode-id"]
    with contextlib.suppress(ValueError, AttributeError):
        value = json.loads(body).get("episode_id")
        return str(value) if value is not None else None
    return None


def _relay(response: httpx.Response, replica: Replica, path: str) -> Response:
    content = response.content
    if path == "/v1/generate" and response.status_code == 200:
        with contextlib.suppress(ValueError):
            body = json.loads(content)
            body["replica"] = replica.url
            return JSONResponse(body)
    return Response(content, response.status_code,
                    media_type=response.headers.get("content-type"))


def _forward_headers(request: Request) -> dict[str, str]:
    keep = ("content-type", "authorization", "x-episode-id", "accept")
    return {k: v for k, v in request.headers.items() if k.lower() in keep}


def create_router_app(settings: RouterSettings | None = None) -> FastAPI:
    settings = settings or RouterSettings()
    metrics = Metrics("inference_router")
    router = Router(settings, metrics)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await router.pool.check_all(router.http, settings.health_timeout_s)
        watcher = asyncio.create_task(
            router.pool.watch(router.http, settings.health_interval_s, settings.health_timeout_s)
        )
        try:
            yield
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
            await router.http.aclose()

    app = base_app("inference_router", metrics=metrics, readiness=router.readiness,
                   lifespan=lifespan)
    app.state.router = router
    _install_routes(app, router)
    return app


def _install_routes(app: FastAPI, router: Router) -> None:
    async def proxy(request: Request) -> Response:
        body = await request.body()
        headers = _forward_headers(request)
        wants_stream = False
        with contextlib.suppress(ValueError, AttributeError):
            wants_stream = bool(json.loads(body).get("stream"))
        if wants_stream:
            return await router.forward_stream(request.url.path, body, headers)
        return await router.forward(request.url.path, body, headers)

    for path in PROXIED:
        app.add_api_route(path, proxy, methods=["POST"], tags=["router"])

    @app.post("/v1/weights", response_model=WeightUpdateResult, tags=["router"])
    async def load_weights(update: WeightUpdate) -> WeightUpdateResult:
        return await router.load_weights(update)

    @app.post("/v1/pause", tags=["router"])
    async def pause() -> dict[str, Any]:
        return _fan_summary(await router.fan_out("/v1/pause", None, 30.0))

    @app.post("/v1/resume", tags=["router"])
    async def resume() -> dict[str, Any]:
        return _fan_summary(await router.fan_out("/v1/resume", None, 30.0))

    @app.get("/v1/replicas", tags=["router"])
    async def replicas() -> dict[str, Any]:
        router.observe()
        return {"replicas": [r.view() for r in router.pool.replicas]}

    @app.get("/v1/models", tags=["router"])
    async def models() -> Response:
        replica = router._pick(None, set())
        response = await router.http.get(replica.url + "/v1/models", timeout=10.0)
        return Response(response.content, response.status_code,
                        media_type=response.headers.get("content-type"))

    @app.middleware("http")
    async def _gauges(request: Request, call_next):  # type: ignore[no-untyped-def]
        if request.url.path == "/metrics":
            router.observe()
        return await call_next(request)


def _fan_summary(results: list[tuple[Replica, dict[str, Any] | None, str | None]]
                 ) -> dict[str, Any]:
    return {"replicas": {r.url: (body if error is None else {"error": error})
                         for r, body, error in results}}


def main(argv: list[str] | None = None) -> None:
    """`python -m services.inference router [--replicas URL,URL] [--host H] [--port P]`."""
    import argparse

    import uvicorn

    from services.common.logging import configure_logging

    parser = argparse.ArgumentParser(prog="python -m services.inference router",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", help="comma-separated replica base URLs")
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    args = parser.parse_args(argv)
    overrides: dict[str, Any] = {k: v for k, v in (("host", args.host), ("port", args.port))
                                 if v is not None}
    if args.replicas:
        overrides["replicas"] = [u.strip() for u in args.replicas.split(",") if u.strip()]
    settings = RouterSettings(**overrides)
    configure_logging("inference-router", settings.log_level, settings.log_json)
    uvicorn.run(create_router_app(settings), host=settings.host, port=settings.port,
                log_config=None)
