"""What the learner needs from replay, as a Protocol that the HTTP clients and the
in-process stores (memory, Redis) all satisfy; sync or async methods both work."""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import Any, Protocol

from services.common.jobspec import Endpoints
from services.common.wire import PolicyPublication
from services.replay.schemas import Batch

log = logging.getLogger(__name__)


class ReplaySource(Protocol):
    def take_batch(
        self, job_id: str, version: int, max_staleness: int, num_groups: int, wait_s: float
    ) -> Any: ...

    def ack(self, job_id: str, batch_id: str) -> Any: ...

    def recover(self, job_id: str) -> Any: ...

    def publish(self, publication: PolicyPublication) -> Any: ...

    def latest_publication(self, job_id: str) -> Any: ...


class ReplayAdapter:
    """Calls a ReplaySource synchronously, awaiting coroutines on a private event loop."""

    def __init__(self, source: ReplaySource) -> None:
        self.source = source
        self._loop: asyncio.AbstractEventLoop | None = None

    def _resolve(self, value: Any) -> Any:
        if not inspect.isawaitable(value):
            return value
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(value)

    def take_batch(
        self, job_id: str, version: int, max_staleness: int, num_groups: int, wait_s: float
    ) -> Batch | None:
        got = self._resolve(
            self.source.take_batch(job_id, version, max_staleness, num_groups, wait_s)
        )
        if got is None or isinstance(got, Batch):
            return got
        return Batch.model_validate(got)

    def ack(self, job_id: str, batch_id: str) -> None:
        self._resolve(self.source.ack(job_id, batch_id))

    def recover(self, job_id: str) -> Any:
        return self._resolve(self.source.recover(job_id))

    def publish(self, publication: PolicyPublication) -> None:
        self._resolve(self.source.publish(publication))

    def latest_publication(self, job_id: str) -> PolicyPublication | None:
        got = self._resolve(self.source.latest_publication(job_id))
        if got is None or isinstance(got, PolicyPublication):
            return got
        return PolicyPublication.model_validate(got)

    def close(self) -> None:
        closer = getattr(self.source, "close", None)
        if callable(closer):
            self._resolve(closer())
        if self._loop is not None:
            self._loop.close()
            self._loop = None


def connect_replay(endpoints: Endpoints) -> ReplayAdapter:
    """The replay service's HTTP client at `endpoints.replay`; a `redis://` URL there
    opens the Redis store in-process instead (no replay service hop)."""
    if endpoints.replay.startswith(("redis://", "rediss://")):
        from services.replay.redis_store import RedisStore
        from services.replay.settings import RedisBackend

        return ReplayAdapter(RedisStore(RedisBackend(url=endpoints.replay)))  # type: ignore[arg-type]
    from services.replay.client import ReplayClient

    client = ReplayClient(endpoints.replay)
    if not hasattr(client, "take_batch"):
        raise RuntimeError("services.replay.client.ReplayClient lacks take_batch")
    return ReplayAdapter(client)  # type: ignore[arg-type]
