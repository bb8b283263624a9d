"""Typed clients for the replay service, with the same method names as the in-process
store (`BaseStore` / `AsyncStore`), so callers can switch between them freely."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx

from services.common.client import AsyncServiceClient, ServiceClient
from services.common.errors import NotFound
from services.common.wire import PolicyPublication, Trajectory
from services.replay.schemas import (
    AckResponse,
    AdmitRequest,
    AdmitResponse,
    Batch,
    FinishRequest,
    RecoverResponse,
    ReleaseRequest,
    ReplayStats,
    TakeRequest,
    TrajectoryPage,
)
from services.replay.store import as_admit_request, as_take_request

_TAKE_SLACK_S = 30.0


@dataclass
class _Call:
    """One HTTP call, described once and run by the sync or the async client."""

    method: str
    path: str
    parse: Callable[[httpx.Response], Any]
    kwargs: dict[str, Any] = field(default_factory=dict)


def _json(body: Any) -> dict[str, Any]:
    return {"json": body}


def _model(model: Any) -> Callable[[httpx.Response], Any]:
    return lambda r: model.model_validate(r.json())


def _field(model: Any, name: str) -> Callable[[httpx.Response], Any]:
    """Parse the response as `model` and return its field `name`."""
    return lambda r: getattr(model.model_validate(r.json()), name)


def _nothing(r: httpx.Response) -> None:
    return None


class _Calls:
    @staticmethod
    def put_many(trajs: list[Trajectory]) -> _Call:
        job_id = trajs[0].job_id
        body = [t.model_dump(mode="json") for t in trajs]
        return _Call("POST", f"/v1/jobs/{job_id}/trajectories", _nothing, _json(body))

    @staticmethod
    def admit(job_id: str, req: AdmitRequest) -> _Call:
        return _Call(
            "POST", f"/v1/jobs/{job_id}/admit", _model(AdmitResponse), _json(req.model_dump())
        )

    @staticmethod
    def release(job_id: str, count: int) -> _Call:
        body = ReleaseRequest(count=count).model_dump()
        return _Call("POST", f"/v1/jobs/{job_id}/admit/release", _model(AdmitResponse), _json(body))

    @staticmethod
    def take(job_id: str, req: TakeRequest) -> _Call:
        def parse(r: httpx.Response) -> Batch | None:
            return None if r.status_code == 204 else Batch.model_validate(r.json())

        kwargs = _json(req.model_dump()) | {"timeout": req.wait_s + _TAKE_SLACK_S}
        return _Call("POST", f"/v1/jobs/{job_id}/batches/take", parse, kwargs)

    @staticmethod
    def ack(job_id: str, batch_id: str) -> _Call:
        return _Call(
            "POST", f"/v1/jobs/{job_id}/batches/{batch_id}/ack", _field(AckResponse, "acked")
        )

    @staticmethod
    def recover(job_id: str) -> _Call:
        return _Call(
            "POST", f"/v1/jobs/{job_id}/recover", _field(RecoverResponse, "requeued_batches")
        )

    @staticmethod
    def stats(job_id: str) -> _Call:
        return _Call("GET", f"/v1/jobs/{job_id}/stats", _model(ReplayStats))

    @staticmethod
    def trajectories(job_id: str, offset: int, limit: int) -> _Call:
        params = {"params": {"offset": offset, "limit": limit}}
        return _Call("GET", f"/v1/jobs/{job_id}/trajectories", _model(TrajectoryPage), params)

    @staticmethod
    def publish(pub: PolicyPublication) -> _Call:
        body = _json(pub.model_dump(mode="json"))
        return _Call("POST", f"/v1/jobs/{pub.job_id}/publications", _nothing, body)

    @staticmethod
    def latest_publication(job_id: str) -> _Call:
        return _Call(
            "GET", f"/v1/jobs/{job_id}/publications/latest", _model(PolicyPublication)
        )

    @staticmethod
    def finish(job_id: str, reason: str) -> _Call:
        body = _json(FinishRequest(reason=reason).model_dump())
        return _Call("POST", f"/v1/jobs/{job_id}/finish", _nothing, body)

    @staticmethod
    def delete_job(job_id: str) -> _Call:
        return _Call("DELETE", f"/v1/jobs/{job_id}", _nothing)


class ReplayClient(ServiceClient):
    """Synchronous client for the replay service (e.g. for the learner)."""

    def _do(self, call: _Call) -> Any:
        return call.parse(self._request(call.method, call.path, **call.kwargs))

    def put(self, traj: Trajectory) -> None:
        self.put_many([traj])

    def put_many(self, trajs: Iterable[Trajectory]) -> None:
        items = list(trajs)
        if items:
            self._do(_Calls.put_many(items))

    def admit(
        self,
        job_id: str,
        version: AdmitRequest | int,
        max_staleness: int | None = None,
        batch_size: int | None = None,
        count: int = 1,
    ) -> AdmitResponse:
        req = as_admit_request(version, max_staleness, batch_size, count)
        return self._do(_Calls.admit(job_id, req))

    def try_admit(
        self, job_id: str, version: int, max_staleness: int, batch_size: int, count: int = 1
    ) -> AdmitResponse:
        return self.admit(job_id, version, max_staleness, batch_size, count)

    def release(self, job_id: str, count: int) -> AdmitResponse:
        return self._do(_Calls.release(job_id, count))

    def take_batch(
        self,
        job_id: str,
        version: TakeRequest | int,
        max_staleness: int | None = None,
        num_groups: int | None = None,
        wait_s: float = 0.0,
    ) -> Batch | None:
        req = as_take_request(version, max_staleness, num_groups, wait_s)
        return self._do(_Calls.take(job_id, req))

    def ack(self, job_id: str, batch_id: str) -> bool:
        return self._do(_Calls.ack(job_id, batch_id))

    def recover(self, job_id: str) -> int:
        return self._do(_Calls.recover(job_id))

    def stats(self, job_id: str) -> ReplayStats:
        return self._do(_Calls.stats(job_id))

    def trajectories(self, job_id: str, offset: int = 0, limit: int = 50) -> TrajectoryPage:
        return self._do(_Calls.trajectories(job_id, offset, limit))

    archive = trajectories

    def publish(self, pub: PolicyPublication) -> None:
        self._do(_Calls.publish(pub))

    def latest_publication(self, job_id: str) -> PolicyPublication | None:
        try:
            return self._do(_Calls.latest_publication(job_id))
        except NotFound:
            return None

    def finish(self, job_id: str, reason: str = "finished") -> None:
        self._do(_Calls.finish(job_id, reason))

    def delete_job(self, job_id: str) -> None:
        self._do(_Calls.delete_job(job_id))


class AsyncReplayClient(AsyncServiceClient):
    """Asynchronous client for the replay service (e.g. for rollout workers)."""

    async def _do(self, call: _Call) -> Any:
        return call.parse(await self._request(call.method, call.path, **call.kwargs))

    async def put(self, traj: Trajectory) -> None:
        await self.put_many([traj])

    async def put_many(self, trajs: Iterable[Trajectory]) -> None:
        items = list(trajs)
        if items:
            await self._do(_Calls.put_many(items))

    async def admit(
        self,
        job_id: str,
        version: AdmitRequest | int,
        max_staleness: int | None = None,
        batch_size: int | None = None,
        count: int = 1,
    ) -> AdmitResponse:
        req = as_admit_request(version, max_staleness, batch_size, count)
        return await self._do(_Calls.admit(job_id, req))

    async def try_admit(
        self, job_id: str, version: int, max_staleness: int, batch_size: int, count: int = 1
    ) -> AdmitResponse:
        return await self.admit(job_id, version, max_staleness, batch_size, count)

    async def release(self, job_id: str, count: int) -> AdmitResponse:
        return await self._do(_Calls.release(job_id, count))

    async def take_batch(
        self,
        job_id: str,
        version: TakeRequest | int,
        max_staleness: int | None = None,
        num_groups: int | None = None,
        wait_s: float = 0.0,
    ) -> Batch | None:
        req = as_take_request(version, max_staleness, num_groups, wait_s)
        return await self._do(_Calls.take(job_id, req))

    async def ack(self, job_id: str, batch_id: str) -> bool:
        return await self._do(_Calls.ack(job_id, batch_id))

    async def recover(self, job_id: str) -> int:
        return await self._do(_Calls.recover(job_id))

    async def stats(self, job_id: str) -> ReplayStats:
        return await self._do(_Calls.stats(job_id))

    async def trajectories(
        self, job_id: str, offset: int = 0, limit: int = 50
    ) -> TrajectoryPage:
        return await self._do(_Calls.trajectories(job_id, offset, limit))

    archive = trajectories

    async def publish(self, pub: PolicyPublication) -> None:
        await self._do(_Calls.publish(pub))

    async def latest_publication(self, job_id: str) -> PolicyPublication | None:
        try:
            return await self._do(_Calls.latest_publication(job_id))
        except NotFound:
            return None

    async def finish(self, job_id: str, reason: str = "finished") -> None:
        await self._do(_Calls.finish(job_id, reason))

    async def delete_job(self, job_id: str) -> None:
        await self._do(_Calls.delete_job(job_id))
