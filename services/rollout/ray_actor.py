"""Scale-out with Ray (`pip install slipstream[ray]`): the same worker code as a Ray
actor, one per worker index. Ray is imported lazily; nothing here is needed otherwise.

    handles = launch_ray_workers(runtime, num_workers=4)
    outcomes = ray.get([h.run.remote() for h in handles])
    ray.get([h.stop.remote() for h in handles])  # graceful, from any process
"""

from __future__ import annotations

import importlib.util
from typing import Any

from services.common.jobspec import JobRuntime
from services.rollout.settings import WorkerConfig


def ray_available() -> bool:
    return importlib.util.find_spec("ray") is not None


class RolloutWorkerActor:
    """Body of the actor (wrapped by `ray.remote` in `actor_class`): an async actor, so
    `stop` runs concurrently with `run` on the actor's event loop."""

    def __init__(self, runtime_json: str, config_json: str | None = None) -> None:
        self.runtime = JobRuntime.model_validate_json(runtime_json)
        self.config = (
            WorkerConfig.model_validate_json(config_json) if config_json else WorkerConfig()
        )
        self.worker: Any = None
        self._stop_requested = False

    async def run(self) -> dict[str, Any]:
        from dataclasses import asdict

        from services.rollout.factory import http_deps
        from services.rollout.worker import RolloutWorker

        async with http_deps(self.runtime, self.config) as deps:
            self.worker = RolloutWorker(self.runtime, deps, self.config)
            if self._stop_requested:
                self.worker.stop()
            outcome = await self.worker.run()
        return {**asdict(outcome), "exit_code": outcome.exit_code}

    async def stop(self) -> None:
        self._stop_requested = True
        if self.worker is not None:
            self.worker.stop()


def actor_class(num_cpus: float = 1.0) -> Any:
    import ray

    return ray.remote(num_cpus=num_cpus)(RolloutWorkerActor)


def launch_ray_workers(
    runtime: JobRuntime,
    num_workers: int | None = None,
    config: WorkerConfig | None = None,
    num_cpus: float = 1.0,
) -> list[Any]:
    """Start `num_workers` (default spec.resources.rollout_workers) actors; each gets its
    own worker_index. Call `ray.init(...)` first."""
    cls = actor_class(num_cpus)
    n = num_workers or runtime.spec.resources.rollout_workers
    cfg = (config or WorkerConfig()).model_dump_json()
    return [
        cls.remote(runtime.model_copy(update={"worker_index": i}).model_dump_json(), cfg)
        for i in range(n)
    ]
