"""The Ray actor wrapper runs the same worker code (only where Ray is installed)."""

from __future__ import annotations

import pytest

from services.common.jobspec import JobRuntime, JobSpec
from services.rollout.ray_actor import RolloutWorkerActor, ray_available


def test_actor_body_parses_runtime() -> None:
    spec = JobSpec.model_validate({"environments": [{"name": "arithmetic"}]})
    runtime = JobRuntime(job_id="r", spec=spec, run_dir="/tmp", worker_index=3)
    actor = RolloutWorkerActor(runtime.model_dump_json())
    assert actor.runtime == runtime and actor.worker is None


@pytest.mark.skipif(not ray_available(), reason="ray is not installed (the `ray` extra)")
def test_ray_actors_start_with_distinct_indices() -> None:
    import ray

    from services.rollout.ray_actor import launch_ray_workers

    ray.init(num_cpus=2, include_dashboard=False)
    try:
        spec = JobSpec.model_validate({"environments": [{"name": "arithmetic"}]})
        runtime = JobRuntime(job_id="r", spec=spec, run_dir="/tmp")
        handles = launch_ray_workers(runtime, num_workers=2, num_cpus=0.5)
        ray.get([h.stop.remote() for h in handles])
    finally:
        ray.shutdown()
