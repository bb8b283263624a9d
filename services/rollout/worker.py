"""The rollout worker: groups of episodes, run continuously under AReaL's admission rule.

Per group: learn the policy version from replay's latest publication, ask replay to
admit `group_size` episodes, draw a task, run the episodes concurrently (bounded by
`resources.episodes_per_worker`), score them, push the complete group to replay.

It stops when the budget is reached (published version >= budget.max_steps, or the wall
time), when the job is marked finished in replay, when asked (`stop()`, e.g. on SIGTERM:
in-flight episodes are aborted and their admission slots given back), or when episodes
keep failing (`FailureTracker`), which is the only non-zero exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from services.common.jobspec import JobRuntime
from services.common.wire import Trajectory, TrajectoryStatus, new_id
from services.rollout.backends import EnvSessions, ReplayPort, RewardScorer
from services.rollout.episode import EpisodeResult, EpisodeRunner, EpisodeTask
from services.rollout.failures import FailureTracker
from services.rollout.metrics import RolloutMetrics
from services.rollout.scoring import score_results
from services.rollout.settings import WorkerConfig
from services.rollout.tasks import TaskPick, TaskSampler

log = logging.getLogger(__name__)


class WorkerExit(StrEnum):
    BUDGET = "budget"  # the learner reached budget.max_steps (or wall time ran out)
    FINISHED = "finished"  # the job was marked finished in replay
    STOPPED = "stopped"  # stop() / SIGTERM
    FAILED = "failed"  # too many failed episodes, or replay refused our data


@dataclass
class WorkerOutcome:
    reason: WorkerExit
    detail: str = ""
    episodes: int = 0
    groups: int = 0
    failures: int = 0
    by_status: dict[str, int] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return 1 if self.reason == WorkerExit.FAILED else 0


class Runner(Protocol):
    async def run(self, task: EpisodeTask) -> EpisodeResult: ...


@dataclass
class WorkerDeps:
    replay: ReplayPort
    runner: Runner | EpisodeRunner
    scorer: RewardScorer
    envs: EnvSessions


class RolloutWorker:
    def __init__(
        self,
        runtime: JobRuntime,
        deps: WorkerDeps,
        config: WorkerConfig | None = None,
        metrics: RolloutMetrics | None = None,
    ) -> None:
        self.runtime = runtime
        self.spec = runtime.spec
        self.job = runtime.job_id
        self.deps = deps
        self.config = config or WorkerConfig()
        self.metrics = metrics or RolloutMetrics()
        self.failures = FailureTracker(self.config)
        self.sampler = TaskSampler(self.spec, runtime.worker_index, deps.envs,
                                   self.config.max_train_tasks)
        self.version = 0
        self.outcome = WorkerOutcome(reason=WorkerExit.STOPPED)
        self._stop = asyncio.Event()
        self._freed = asyncio.Event()
        self._fatal: str | None = None
        self._groups: set[asyncio.Task[None]] = set()
        self._in_flight = 0
        self._unpushed = 0  # admitted episodes whose group is not in replay yet
        self._slots = asyncio.Semaphore(self.spec.resources.episodes_per_worker)

    # ------------------------------------------------------------------ control
    def stop(self) -> None:
        self._stop.set()

    @property
    def in_flight(self) -> int:
        return self._in_flight

    async def run(self) -> WorkerOutcome:
        started = time.monotonic()
        try:
            reason, detail = await self._loop(started)
        finally:
            await self._abort_in_flight()
        self.outcome.reason, self.outcome.detail = reason, detail
        self.outcome.failures = self.failures.total
        log.info("worker %s/%d exits: %s %s", self.job, self.runtime.worker_index, reason, detail)
        return self.outcome

    async def _sleep(self, seconds: float) -> bool:
        """Sleep unless stopped; True when stopped."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), seconds)
        return self._stop.is_set()

    # ------------------------------------------------------------------ main loop
    async def _loop(self, started: float) -> tuple[WorkerExit, str]:
        g = self.spec.group_size
        backoff = self.config.admission_poll_s
        wait_started: float | None = None
        while True:
            if verdict := self._stop_verdict(started):
                return verdict
            self.version = await self._read_version()
            if self.version >= self.spec.budget.max_steps:
                return WorkerExit.BUDGET, f"policy version {self.version} reached max_steps"
            if not await self._wait_capacity(g):
                continue
            wait_started = wait_started or time.monotonic()
            out = await self.deps.replay.admit(
                self.job, self.version, self.spec.max_staleness, self.spec.batch_size, count=g
            )
            if out.finished:
                return WorkerExit.FINISHED, "the job was marked finished"
            if out.admitted == g:
                self.metrics.admission_wait.labels(self.job).observe(
                    time.monotonic() - wait_started
                )
                wait_started, backoff = None, self.config.admission_poll_s
                self._spawn_group(self.version)
                continue
            if out.admitted:  # a partial group is useless: give the slots back
                await self.deps.replay.release(self.job, out.admitted)
            self.metrics.refusals.labels(self.job).inc()
            await self._sleep(backoff)
            backoff = min(backoff * 2, self.config.admission_poll_max_s)

    def _stop_verdict(self, started: float) -> tuple[WorkerExit, str] | None:
        if self._fatal:
            return WorkerExit.FAILED, self._fatal
        if why := self.failures.verdict():
            return WorkerExit.FAILED, why
        if self._stop.is_set():
            return WorkerExit.STOPPED, "stop requested"
        wall = self.spec.budget.max_wall_time_s
        if wall is not None and time.monotonic() - started >= wall:
            return WorkerExit.BUDGET, f"wall time {wall:g}s reached"
        return None

    async def _read_version(self) -> int:
        pub = await self.deps.replay.latest_publication(self.job)
        version = pub.version if pub else 0
        self.metrics.version.labels(self.job).set(version)
        return version

    async def _wait_capacity(self, group_size: int) -> bool:
        """Wait until one more group fits; False when woken for another reason."""
        limit = max(self.spec.resources.episodes_per_worker, group_size)
        if self._in_flight + group_size <= limit:
            return True
        self._freed.clear()
        freed = asyncio.ensure_future(self._freed.wait())
        stopped = asyncio.ensure_future(self._stop.wait())
        await asyncio.wait({freed, stopped}, return_when=asyncio.FIRST_COMPLETED)
        for fut in (freed, stopped):
            fut.cancel()
        return False

    # ------------------------------------------------------------------ groups
    def _spawn_group(self, version: int) -> None:
        g = self.spec.group_size
        self._in_flight += g
        self._unpushed += g
        self.metrics.in_flight.labels(self.job).set(self._in_flight)
        task = asyncio.create_task(self._group(version))
        self._groups.add(task)
        task.add_done_callback(self._group_done)

    def _group_done(self, task: asyncio.Task[None]) -> None:
        self._groups.discard(task)
        self._in_flight -= self.spec.group_size
        self.metrics.in_flight.labels(self.job).set(self._in_flight)
        self._freed.set()
        if not task.cancelled() and (exc := task.exception()) is not None:
            self._fatal = f"group failed: {type(exc).__name__}: {exc}"
            self._stop.set()

    async def _group(self, version: int) -> None:
        pick = await self.sampler.next()
        group_id = new_id()
        results = await asyncio.gather(
            *(self._episode(pick, group_id, i, version) for i in range(self.spec.group_size))
        )
        trajs = await self._score(results)
        await self._push(trajs)
        self._unpushed -= len(trajs)
        self.outcome.groups += 1
        self.metrics.groups.labels(self.job).inc()

    async def _episode(
        self, pick: TaskPick, group_id: str, index: int, version: int
    ) -> EpisodeResult:
        task = EpisodeTask(
            job_id=self.job,
            env=pick.env.name,
            task_set=pick.env.task_set,
            group_id=group_id,
            group_size=self.spec.group_size,
            sample_index=index,
            start_version=version,
            task_id=pick.task_id,
            seed=pick.seed,
            options=pick.env.options,
        )
        async with self._slots:
            start = time.monotonic()
            result = await self.deps.runner.run(task)
        self._account(result.trajectory, time.monotonic() - start)
        return result

    def _account(self, traj: Trajectory, seconds: float) -> None:
        status = traj.status.value
        self.outcome.episodes += 1
        self.outcome.by_status[status] = self.outcome.by_status.get(status, 0) + 1
        self.metrics.episodes.labels(self.job, status).inc()
        self.metrics.episode_seconds.labels(self.job).observe(seconds)
        self.metrics.tokens.labels(self.job, "model").inc(traj.num_model_tokens)
        self.metrics.tokens.labels(self.job, "total").inc(len(traj.token_ids))
        if traj.error is not None and traj.status != TrajectoryStatus.OK:
            self.metrics.failures.labels(self.job, traj.error.kind).inc()
        self.failures.record(traj)

    # ------------------------------------------------------------------ scoring, push
    async def _score(self, results: list[EpisodeResult]) -> list[Trajectory]:
        return await score_results(self.deps.scorer, results, self.config.score_timeout_s)

    async def _push(self, trajs: list[Trajectory]) -> None:
        delay = 0.1
        for attempt in range(self.config.push_retries + 1):
            try:
                await self.deps.replay.put_many(trajs)
                return
            except Exception as exc:  # 429 back-pressure or a replay hiccup: retry
                if attempt == self.config.push_retries:
                    raise
                log.info("push to replay refused (%r); retrying in %.1fs", exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)

    # ------------------------------------------------------------------ shutdown
    async def _abort_in_flight(self) -> None:
        groups = list(self._groups)
        for task in groups:
            task.cancel()
        if groups:
            await asyncio.gather(*groups, return_exceptions=True)
        if self._unpushed > 0:
            with contextlib.suppress(Exception):
                await self.deps.replay.release(self.job, self._unpushed)
            self._unpushed = 0

