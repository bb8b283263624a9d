"""In-process worker pool of the rollout service: start, stop and list workers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field

from services.common.errors import Conflict, NotFound, Overloaded
from services.common.jobspec import JobRuntime
from services.rollout.metrics import RolloutMetrics
from services.rollout.schemas import WorkerInfo
from services.rollout.settings import WorkerConfig
from services.rollout.worker import RolloutWorker, WorkerDeps, WorkerExit, WorkerOutcome

log = logging.getLogger(__name__)
DepsFactory = Callable[[JobRuntime, WorkerConfig], AbstractAsyncContextManager[WorkerDeps]]


@contextlib.asynccontextmanager
async def default_deps(runtime: JobRuntime, config: WorkerConfig) -> AsyncIterator[WorkerDeps]:
    from services.rollout.factory import http_deps, load_chat

    chat = await asyncio.to_thread(load_chat, runtime)  # tokenizer loading blocks
    async with http_deps(runtime, config, chat=chat) as deps:
        yield deps


@dataclass
class _Entry:
    runtime: JobRuntime
    started_at: float = field(default_factory=time.time)
    worker: RolloutWorker | None = None
    task: asyncio.Task[WorkerOutcome] | None = None
    outcome: WorkerOutcome | None = None
    stop_requested: bool = False

    def info(self) -> WorkerInfo:
        w, o = self.worker, self.outcome or (self.worker.outcome if self.worker else None)
        state = "exited" if self.outcome else ("running" if w else "starting")
        return WorkerInfo(
            job_id=self.runtime.job_id,
            worker_index=self.runtime.worker_index,
            state=state,
            started_at=self.started_at,
            episodes=o.episodes if o else 0,
            groups=o.groups if o else 0,
            failures=w.failures.total if w else 0,
            in_flight=w.in_flight if w and not self.outcome else 0,
            version=w.version if w else 0,
            by_status=dict(o.by_status) if o else {},
            exit_reason=self.outcome.reason.value if self.outcome else None,
            detail=self.outcome.detail if self.outcome else None,
        )


class WorkerPool:
    def __init__(
        self,
        config: WorkerConfig,
        metrics: RolloutMetrics,
        deps_factory: DepsFactory = default_deps,
        max_workers: int = 16,
    ) -> None:
        self.config = config
        self.metrics = metrics
        self.deps_factory = deps_factory
        self.max_workers = max_workers
        self._entries: dict[tuple[str, int], _Entry] = {}

    def _running(self) -> list[_Entry]:
        return [e for e in self._entries.values() if e.outcome is None]

    def start(self, runtime: JobRuntime) -> WorkerInfo:
        key = (runtime.job_id, runtime.worker_index)
        current = self._entries.get(key)
        if current is not None and current.outcome is None:
            raise Conflict(f"worker {key[1]} of job {key[0]} is already running")
        if len(self._running()) >= self.max_workers:
            raise Overloaded(f"this rollout process already runs {self.max_workers} workers")
        entry = self._entries[key] = _Entry(runtime=runtime)
        entry.task = asyncio.create_task(self._run(entry))
        return entry.info()

    async def _run(self, entry: _Entry) -> WorkerOutcome:
        try:
            async with self.deps_factory(entry.runtime, self.config) as deps:
                entry.worker = RolloutWorker(entry.runtime, deps, self.config, self.metrics)
                if entry.stop_requested:
                    entry.worker.stop()
                outcome = await entry.worker.run()
        except Exception as exc:  # e.g. the tokenizer or a service is missing
            log.exception("worker of job %s could not run", entry.runtime.job_id)
            outcome = WorkerOutcome(reason=WorkerExit.FAILED, detail=f"{type(exc).__name__}: {exc}")
        entry.outcome = outcome
        return outcome

    async def stop(self, job_id: str, index: int | None = None) -> list[WorkerInfo]:
        entries = [
            e for (job, i), e in self._entries.items()
            if job == job_id and (index is None or i == index)
        ]
        if not entries:
            raise NotFound(f"no rollout worker for job {job_id}" +
                           (f" with index {index}" if index is not None else ""))
        for entry in entries:
            entry.stop_requested = True
            if entry.worker is not None:
                entry.worker.stop()
        await asyncio.gather(*(e.task for e in entries if e.task), return_exceptions=True)
        return [e.info() for e in entries]

    def list(self, job_id: str | None = None) -> list[WorkerInfo]:
        return [
            e.info() for (job, _), e in sorted(self._entries.items())
            if job_id is None or job == job_id
        ]

    async def shutdown(self) -> None:
        for job_id in {job for job, _ in self._entries}:
            with contextlib.suppress(NotFound):
                await self.stop(job_id)
