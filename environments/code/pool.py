"""An execution pool: a concurrency cap, a bounded queue (429 when full) and
per-execution metrics, in front of one `Sandbox`."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor

from environments.code.models import Limits, SandboxResult
from environments.code.sandbox import FileContent, Sandbox
from services.common.errors import Overloaded
from services.common.metrics import Metrics

log = logging.getLogger(__name__)

MEMORY_BUCKETS = tuple(float(2**i * 2**20) for i in range(3, 14))  # 8 MiB .. 8 GiB


class PoolMetrics:
    def __init__(self, metrics: Metrics) -> None:
        self.executions = metrics.counter(
            "sandbox_executions_total", "Sandbox executions.", ["status", "isolation"]
        )
        self.wall = metrics.histogram("sandbox_wall_seconds", "Execution wall time.")
        self.cpu = metrics.histogram("sandbox_cpu_seconds", "Execution CPU time.")
        self.queue_wait = metrics.histogram("sandbox_queue_seconds", "Time waiting for a slot.")
        self.memory = metrics.histogram(
            "sandbox_memory_bytes", "Peak memory per execution.", buckets=MEMORY_BUCKETS
        )
        self.running = metrics.gauge("sandbox_running", "Executions running now.")
        self.queued = metrics.gauge("sandbox_queued", "Executions waiting for a slot.")
        self.rejected = metrics.counter("sandbox_rejected_total", "Executions refused (429).")

    def observe(self, result: SandboxResult) -> None:
        self.executions.labels(result.status.value, result.isolation.value).inc()
        self.wall.observe(result.wall_time_s)
        self.cpu.observe(result.cpu_time_s)
        self.memory.observe(result.memory_bytes)


class SandboxPool:
    """Runs at most `concurrency` executions at once; up to `queue_size` more wait; past
    that `Overloaded` (HTTP 429). Usable from async code (`run`) and from threads
    (`run_sync`, e.g. environment tools)."""

    def __init__(
        self,
        sandbox: Sandbox,
        metrics: Metrics | None = None,
        *,
        concurrency: int | None = None,
        queue_size: int | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.concurrency = min(concurrency or sandbox.settings.concurrency, sandbox.settings.slots)
        self.queue_size = sandbox.settings.queue_size if queue_size is None else queue_size
        self.metrics = PoolMetrics(metrics or Metrics("sandbox"))
        self._executor = ThreadPoolExecutor(self.concurrency, thread_name_prefix="sandbox")
        self._admitted = 0  # running + queued
        self._lock = threading.Lock()

    @property
    def capacity(self) -> int:
        return self.concurrency + self.queue_size

    def _admit(self) -> None:
        with self._lock:
            if self._admitted >= self.capacity:
                self.metrics.rejected.inc()
                raise Overloaded(
                    f"sandbox pool is full ({self.concurrency} running, "
                    f"{self.queue_size} queued); retry later"
                )
            self._admitted += 1
            self.metrics.queued.set(max(0, self._admitted - self.concurrency))

    def _leave(self) -> None:
        with self._lock:
            self._admitted -= 1
            self.metrics.queued.set(max(0, self._admitted - self.concurrency))

    def _execute(
        self,
        enqueued: float,
        code: str,
        stdin: FileContent,
        files: Mapping[str, FileContent] | None,
        limits: Limits | None,
    ) -> SandboxResult:
        self.metrics.queue_wait.observe(time.monotonic() - enqueued)
        self.metrics.running.inc()
        try:
            result = self.sandbox.run(code, stdin, files, limits)
        finally:
            self.metrics.running.dec()
        self.metrics.observe(result)
        return result

    async def run(
        self,
        code: str,
        stdin: FileContent = "",
        files: Mapping[str, FileContent] | None = None,
        limits: Limits | None = None,
    ) -> SandboxResult:
        self._admit()
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(
                self._executor, self._execute, time.monotonic(), code, stdin, files, limits
            )
        finally:
            self._leave()

    def run_sync(
        self,
        code: str,
        stdin: FileContent = "",
        files: Mapping[str, FileContent] | None = None,
        limits: Limits | None = None,
    ) -> SandboxResult:
        """Blocking variant for worker threads (never call from the event loop)."""
        self._admit()
        try:
            future = self._executor.submit(
                self._execute, time.monotonic(), code, stdin, files, limits
            )
            return future.result()
        finally:
            self._leave()

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
