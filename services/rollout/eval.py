"""Evaluation episodes: held-out tasks (the eval split) at `spec.eval.temperature`, one
sample per task, scored like training episodes, never pushed to the learner's replay
stream. Returns the mean reward (the control plane records it as an eval metric)."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field

from services.common.jobspec import JobRuntime
from services.common.wire import Trajectory, new_id
from services.rollout.episode import EpisodeTask
from services.rollout.scoring import score_results
from services.rollout.settings import WorkerConfig
from services.rollout.tasks import list_task_ids
from services.rollout.worker import WorkerDeps


@dataclass
class EvalResult:
    version: int
    mean_reward: float
    num_tasks: int
    by_status: dict[str, int] = field(default_factory=dict)
    trajectories: list[Trajectory] = field(default_factory=list)


async def _eval_tasks(deps: WorkerDeps, runtime: JobRuntime, num_tasks: int
                      ) -> list[tuple[str, str, str]]:
    """(env, task_set, task_id), round-robin over the job's environments."""
    per_env = [
        [(e.name, e.task_set, tid) for tid in await list_task_ids(deps.envs, e, "eval", num_tasks)]
        for e in runtime.spec.environments
    ]
    out: list[tuple[str, str, str]] = []
    while len(out) < num_tasks and any(per_env):
        for tasks in per_env:
            if tasks and len(out) < num_tasks:
                out.append(tasks.pop(0))
    return out


async def evaluate(
    runtime: JobRuntime, version: int, num_tasks: int, deps: WorkerDeps,
    config: WorkerConfig | None = None,
) -> EvalResult:
    config = config or WorkerConfig()
    slots = asyncio.Semaphore(runtime.spec.resources.episodes_per_worker)
    options = {e.name: e.options for e in runtime.spec.environments}
    tasks = await _eval_tasks(deps, runtime, num_tasks)

    async def one(env: str, task_set: str, task_id: str):  # type: ignore[no-untyped-def]
        task = EpisodeTask(
            job_id=runtime.job_id, env=env, task_set=task_set, group_id="eval-" + new_id(),
            start_version=version, task_id=task_id, split="eval", options=options[env],
        )
        async with slots:
            return await deps.runner.run(task)

    results = await asyncio.gather(*(one(*t) for t in tasks))
    trajs = await score_results(deps.scorer, list(results), config.score_timeout_s)
    rewards = [t.reward for t in trajs]
    return EvalResult(
        version=version,
        mean_reward=sum(rewards) / len(rewards) if rewards else 0.0,
        num_tasks=len(trajs),
        by_status=dict(Counter(t.status.value for t in trajs)),
        trajectories=trajs,
    )


async def run_eval(
    runtime: JobRuntime, version: int, num_tasks: int | None = None,
    config: WorkerConfig | None = None, deps: WorkerDeps | None = None,
) -> EvalResult:
    """Evaluate policy `version` on `num_tasks` (default spec.eval.num_tasks) held-out tasks.
    The runner must sample at spec.eval.temperature: `http_deps` builds it so when no
    `deps` are given."""
    config = config or WorkerConfig()
    n = num_tasks or runtime.spec.eval.num_tasks
    if deps is not None:
        return await evaluate(runtime, version, n, deps, config)
    from services.rollout.factory import http_deps

    async with http_deps(runtime, config, temperature=runtime.spec.eval.temperature) as built:
        return await evaluate(runtime, version, n, built, config)
