"""Typed clients for the api service (the CLI and job processes use them).

The token comes from the `token` argument, else `$SLIPSTREAM_API_TOKEN`, else the
bootstrap token file `$SLIPSTREAM_HOME/token` the local stack writes on first start.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import httpx

from services.api.schemas import (
    JobEvent,
    JobInfo,
    JobPage,
    JobStatus,
    MetricsAccepted,
    MetricSeries,
)
from services.api.tokens import read_token_file
from services.common.client import AsyncServiceClient, ServiceClient, _ClientCore
from services.common.errors import Unauthorized
from services.common.jobspec import JobSpec
from services.common.paths import slipstream_home
from services.common.wire import MetricPoint
from services.replay.schemas import TrajectoryPage

DEFAULT_URL = "http://127.0.0.1:8000"
CANCEL_TIMEOUT_S = 120.0  # cancel waits for the runner's SIGTERM grace period
STREAM_TIMEOUT = httpx.Timeout(10.0, read=90.0)  # the server pings every 15 s


def default_token() -> str | None:
    return os.environ.get("SLIPSTREAM_API_TOKEN") or read_token_file(slipstream_home() / "token")


def _auth_headers(token: str | None) -> dict[str, str]:
    token = token or default_token()
    return {"Authorization": f"Bearer {token}"} if token else {}


_TOKEN_HINT = " (set SLIPSTREAM_API_TOKEN or create one: `slipstream tokens create NAME`)"


def _check(response: httpx.Response) -> httpx.Response:
    """The shared status mapping, plus where to get a token when the server wants one."""
    try:
        return _ClientCore._check(response)
    except Unauthorized as exc:
        raise Unauthorized(exc.message + _TOKEN_HINT) from None


def _spec_body(spec: JobSpec | dict[str, Any]) -> dict[str, Any]:
    return spec.model_dump(mode="json") if isinstance(spec, JobSpec) else dict(spec)


def _job_params(status: Iterable[JobStatus | str] | None, offset: int, limit: int) -> Any:
    params: list[tuple[str, str | int]] = [("offset", offset), ("limit", limit)]
    params += [("status", str(s)) for s in status or ()]
    return params


def _metric_params(kind: str | None, since_step: int | None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if kind:
        params["kind"] = kind
    if since_step is not None:
        params["since_step"] = since_step
    return params


def _points_body(points: list[MetricPoint]) -> list[dict[str, Any]]:
    return [p.model_dump(mode="json") for p in points]


class SseParser:
    """Incremental parser of `text/event-stream` lines into JobEvents."""

    def __init__(self) -> None:
        self.data: list[str] = []

    def feed(self, line: str) -> JobEvent | None:
        if line == "":
            if not self.data:
                return None
            payload, self.data = "\n".join(self.data), []
            return JobEvent.model_validate_json(payload)
        if line.startswith("data:"):
            self.data.append(line[5:].lstrip(" "))
        return None  # id:/event: are repeated inside data; comments (pings) are ignored


class ApiClient(ServiceClient):
    """Synchronous client for the api service."""

    _check = staticmethod(_check)

    def __init__(self, base_url: str = DEFAULT_URL, token: str | None = None, **kwargs: Any):
        headers = {**_auth_headers(token), **kwargs.pop("headers", {})}
        super().__init__(base_url, headers=headers, **kwargs)

    def submit(self, spec: JobSpec | dict[str, Any]) -> JobInfo:
        response = self._request("POST", "/v1/jobs", json=_spec_body(spec))
        return JobInfo.model_validate(response.json())

    def list_jobs(
        self, status: Iterable[JobStatus | str] | None = None, offset: int = 0, limit: int = 50
    ) -> JobPage:
        return self._get_model("/v1/jobs", JobPage, params=_job_params(status, offset, limit))

    def get_job(self, job_id: str) -> JobInfo:
        return self._get_model(f"/v1/jobs/{job_id}", JobInfo)

    def cancel(self, job_id: str) -> JobInfo:
        return self._post_model(
            f"/v1/jobs/{job_id}/cancel", None, JobInfo, timeout=CANCEL_TIMEOUT_S
        )

    def metrics(
        self, job_id: str, kind: str | None = None, since_step: int | None = None
    ) -> MetricSeries:
        """The job's metric time series (`.points`, by step), optionally filtered."""
        params = _metric_params(kind, since_step)
        return self._get_model(f"/v1/jobs/{job_id}/metrics", MetricSeries, params=params)

    def post_metrics(self, job_id: str, points: list[MetricPoint]) -> int:
        response = self._request("POST", f"/v1/jobs/{job_id}/metrics", json=_points_body(points))
        return MetricsAccepted.model_validate(response.json()).accepted

    def trajectories(self, job_id: str, offset: int = 0, limit: int = 20) -> TrajectoryPage:
        params = {"offset": offset, "limit": limit}
        return self._get_model(f"/v1/jobs/{job_id}/trajectories", TrajectoryPage, params=params)

    def events(self, job_id: str, after: int = 0, follow: bool = True) -> Iterator[JobEvent]:
        """The job's events from `after` on; with `follow`, until its final status
        (reconnecting where a stream breaks off, up to `retries` times in a row)."""
        failures = 0
        while True:
            try:
                for event in self._stream_once(job_id, after, follow):
                    after, failures = event.id, 0
                    yield event
                return
            except httpx.TransportError as exc:
                failures += 1
                if failures > self.retries:
                    raise self._unavailable(exc) from exc

    def _stream_once(self, job_id: str, after: int, follow: bool) -> Iterator[JobEvent]:
        params = {"after": after, "follow": follow}
        path = f"/v1/jobs/{job_id}/events"
        with self.http.stream("GET", path, params=params, timeout=STREAM_TIMEOUT) as response:
            if response.is_error:
                response.read()
                _check(response)
            parser = SseParser()
            for line in response.iter_lines():
                event = parser.feed(line)
                if event is not None:
                    yield event

    def wait(self, job_id: str) -> JobInfo:
        """Block until the job reaches a final state; returns it."""
        for _ in self.events(job_id):
            pass
        return self.get_job(job_id)


class AsyncApiClient(AsyncServiceClient):
    """Asynchronous client for the api service."""

    _check = staticmethod(_check)

    def __init__(self, base_url: str = DEFAULT_URL, token: str | None = None, **kwargs: Any):
        headers = {**_auth_headers(token), **kwargs.pop("headers", {})}
        super().__init__(base_url, headers=headers, **kwargs)

    async def submit(self, spec: JobSpec | dict[str, Any]) -> JobInfo:
        response = await self._request("POST", "/v1/jobs", json=_spec_body(spec))
        return JobInfo.model_validate(response.json())

    async def list_jobs(
        self, status: Iterable[JobStatus | str] | None = None, offset: int = 0, limit: int = 50
    ) -> JobPage:
        return await self._get_model("/v1/jobs", JobPage, params=_job_params(status, offset, limit))

    async def get_job(self, job_id: str) -> JobInfo:
        return await self._get_model(f"/v1/jobs/{job_id}", JobInfo)

    async def cancel(self, job_id: str) -> JobInfo:
        return await self._post_model(
            f"/v1/jobs/{job_id}/cancel", None, JobInfo, timeout=CANCEL_TIMEOUT_S
        )

    async def metrics(
        self, job_id: str, kind: str | None = None, since_step: int | None = None
    ) -> MetricSeries:
        params = _metric_params(kind, since_step)
        return await self._get_model(f"/v1/jobs/{job_id}/metrics", MetricSeries, params=params)

    async def post_metrics(self, job_id: str, points: list[MetricPoint]) -> int:
        path = f"/v1/jobs/{job_id}/metrics"
        response = await self._request("POST", path, json=_points_body(points))
        return MetricsAccepted.model_validate(response.json()).accepted

    async def trajectories(self, job_id: str, offset: int = 0, limit: int = 20) -> TrajectoryPage:
        params = {"offset": offset, "limit": limit}
        path = f"/v1/jobs/{job_id}/trajectories"
        return await self._get_model(path, TrajectoryPage, params=params)

    async def events(
        self, job_id: str, after: int = 0, follow: bool = True
    ) -> AsyncIterator[JobEvent]:
        """Async twin of `ApiClient.events`."""
        failures = 0
        while True:
            try:
                async for event in self._stream_once(job_id, after, follow):
                    after, failures = event.id, 0
                    yield event
                return
            except httpx.TransportError as exc:
                failures += 1
                if failures > self.retries:
                    raise self._unavailable(exc) from exc

    async def _stream_once(self, job_id: str, after: int, follow: bool) -> AsyncIterator[JobEvent]:
        params = {"after": after, "follow": follow}
        path = f"/v1/jobs/{job_id}/events"
        async with self.http.stream("GET", path, params=params, timeout=STREAM_TIMEOUT) as response:
            if response.is_error:
                await response.aread()
                _check(response)
            parser = SseParser()
            async for line in response.aiter_lines():
                event = parser.feed(line)
                if event is not None:
                    yield event

    async def wait(self, job_id: str) -> JobInfo:
        async for _ in self.events(job_id):
            pass
        return await self.get_job(job_id)
