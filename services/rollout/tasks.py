"""Seeded task drawing for a worker: an environment by weight, then a task id from that
environment's train split (listed once from the environment server)."""

from __future__ import annotations

import logging
import random
from collections import deque
from dataclasses import dataclass

from services.common.jobspec import EnvironmentSpec, JobSpec
from services.rollout.backends import EnvSessions

log = logging.getLogger(__name__)
_PAGE = 500


@dataclass(frozen=True)
class TaskPick:
    env: EnvironmentSpec
    task_id: str | None  # None: the server draws with `seed` (same seed -> same task)
    seed: int


async def list_task_ids(
    envs: EnvSessions, env: EnvironmentSpec, split: str, limit: int
) -> list[str]:
    ids: list[str] = []
    while len(ids) < limit:
        page = await envs.list_tasks(
            env.name, split=split, offset=len(ids), limit=min(_PAGE, limit - len(ids)),
            task_set=env.task_set,
        )
        ids += [t.task_id for t in page.tasks]
        if len(page.tasks) < _PAGE:
            break
    return ids


class TaskSampler:
    def __init__(self, spec: JobSpec, worker_index: int, envs: EnvSessions, cap: int) -> None:
        self.spec = spec
        self.envs = envs
        self.cap = cap
        self.rng = random.Random(f"{spec.seed}:{worker_index}")
        self._ids: dict[str, list[str] | None] = {}
        self.recent: deque[str] = deque(maxlen=8)

    async def _task_ids(self, env: EnvironmentSpec) -> list[str] | None:
        key = f"{env.name}/{env.task_set}"
        if key not in self._ids:
            try:
                self._ids[key] = await list_task_ids(self.envs, env, "train", self.cap) or None
            except Exception as exc:  # the server draws instead
                log.warning("cannot list tasks of %s (%s); the server will draw", key, exc)
                self._ids[key] = None
        return self._ids[key]

    async def next(self) -> TaskPick:
        envs = self.spec.environments
        env = self.rng.choices(envs, weights=[e.weight for e in envs])[0]
        seed = self.rng.randrange(2**31)
        ids = await self._task_ids(env)
        task_id = ids[self.rng.randrange(len(ids))] if ids else None
        return TaskPick(env=env, task_id=task_id, seed=seed)
