"""Simulated parts for benches and tests of the asynchronous pipeline: an episode runner
whose turns take a chosen time and whose tokens carry the engine's version at the moment
they are sampled (interruptible rollouts), a learner that takes, "trains", acks and
publishes through the real replay store, and trivial env/scorer stand-ins.

Everything that decides staleness here is real: the worker's admission loop and the
store's admission rule and staleness filter.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.common.jobspec import JobSpec
from services.common.wire import (
    PolicyPublication,
    ScoreItem,
    ScoreResult,
    TaskView,
    Trajectory,
    TurnSpan,
)
from services.rollout.episode import EpisodeResult, EpisodeTask


@dataclass
class PolicyClock:
    """The version the (simulated) inference engine serves right now."""

    version: int = 0


class SimRunner:
    """Episodes of `turns` model turns; each turn (generation + environment step) sleeps
    `duration()` seconds, then emits `tokens_per_turn` tokens stamped with the engine's
    version at that moment."""

    def __init__(
        self,
        clock: PolicyClock,
        duration: Callable[[], float],
        turns: int = 2,
        tokens_per_turn: int = 3,
    ) -> None:
        self.clock = clock
        self.duration = duration
        self.turns = turns
        self.tokens_per_turn = tokens_per_turn

    async def run(self, task: EpisodeTask) -> EpisodeResult:
        total = 0.0
        ids, mask, versions, spans = [1, 2], [0, 0], [0, 0], []
        for turn in range(self.turns):
            step = self.duration()
            total += step
            await asyncio.sleep(step)
            start = len(ids)
            ids += [100 + turn] * self.tokens_per_turn
            mask += [1] * self.tokens_per_turn
            versions += [self.clock.version] * self.tokens_per_turn
            spans.append(TurnSpan(turn=turn, start=start, end=len(ids)))
            ids.append(7)
            mask.append(0)
            versions.append(0)
        traj = Trajectory(
            job_id=task.job_id,
            task_id=task.task_id or f"sim-{task.seed}",
            group_id=task.group_id,
            group_size=task.group_size,
            sample_index=task.sample_index,
            env=task.env,
            token_ids=ids,
            loss_mask=mask,  # type: ignore[arg-type]
            behavior_logprobs=[-0.5 * m for m in mask],
            policy_versions=versions,
            prompt_length=2,
            start_version=task.start_version,
            turn_spans=spans,
            metadata={"duration_s": total},
        )
        return EpisodeResult(trajectory=traj, final_answer="0", env_reward=1.0, task_type="sim")


@dataclass
class _TaskPage:
    tasks: list[TaskView]


class SimEnvs:
    """Just enough of the environments client for task drawing."""

    def __init__(self, num_tasks: int = 64) -> None:
        self.tasks = [
            TaskView(task_id=f"t{i}", task_type="sim", prompt=f"task {i}") for i in range(num_tasks)
        ]

    async def list_tasks(
        self, env: str, split: Any = "train", offset: int = 0, limit: int = 100,
        task_set: str | None = None,
    ) -> _TaskPage:
        return _TaskPage(self.tasks[offset : offset + limit])

    async def create_session(self, request: Any) -> Any:
        raise NotImplementedError("SimRunner does not open sessions")

    async def step(self, session_id: str, call: Any) -> Any:
        raise NotImplementedError

    async def close_session(self, session_id: str) -> None:
        return None


class EnvRewardOnly:
    async def score(self, items: Sequence[ScoreItem]) -> list[ScoreResult]:
        return [ScoreResult(reward=i.env_reward or 0.0, verifier="sim", ok=True) for i in items]


@dataclass
class LearnerLog:
    steps: int = 0
    consumed: list[tuple[int, int]] = field(default_factory=list)  # (learner v, oldest v)
    dropped: int = 0
    step_times: list[float] = field(default_factory=list)

    @property
    def max_lag(self) -> int:
        return max((v - oldest for v, oldest in self.consumed), default=0)


class SimLearner:
    """Take a batch of complete groups, 'train' for `train_s`, ack, publish v+1 (the
    engine switches to v+1 at publication, as after a weight load)."""

    def __init__(
        self, replay: Any, spec: JobSpec, job_id: str, clock: PolicyClock, train_s: float
    ) -> None:
        self.replay = replay
        self.spec = spec
        self.job_id = job_id
        self.clock = clock
        self.train_s = train_s
        self.log = LearnerLog()

    async def run(self, steps: int, take_wait_s: float = 0.5) -> LearnerLog:
        start = time.monotonic()
        version = 0
        while version < steps:
            batch = await self.replay.take_batch(
                self.job_id, version, self.spec.max_staleness, self.spec.groups_per_batch,
                wait_s=take_wait_s,
            )
            if batch is None:
                continue
            self.log.dropped += batch.dropped_stale
            self.log.consumed += [(version, t.oldest_version) for t in batch.trajectories]
            await asyncio.sleep(self.train_s)
            await self.replay.ack(self.job_id, batch.batch_id)
            version += 1
            self.clock.version = version
            await self.replay.publish(
                PolicyPublication(job_id=self.job_id, version=version, checkpoint_path="sim")
            )
            self.log.steps = version
            self.log.step_times.append(time.monotonic() - start)
        return self.log


@dataclass
class PipelineRun:
    learner: LearnerLog
    elapsed_s: float
    outcomes: list[Any]


async def run_pipeline(
    spec: JobSpec,
    replay: Any,
    job_id: str,
    duration: Callable[[], float],
    train_s: float,
    workers: int = 1,
    turns: int = 2,
) -> PipelineRun:
    """Real workers + real store + simulated episodes and learner, until the learner has
    made `spec.budget.max_steps` steps; the workers then see the final version and exit."""
    from services.common.jobspec import JobRuntime
    from services.rollout.settings import WorkerConfig
    from services.rollout.worker import RolloutWorker, WorkerDeps

    clock = PolicyClock()
    config = WorkerConfig(admission_poll_s=0.005, admission_poll_max_s=0.02)
    pool = [
        RolloutWorker(
            JobRuntime(job_id=job_id, spec=spec, run_dir="/tmp", worker_index=i),
            WorkerDeps(
                replay=replay,
                runner=SimRunner(clock, duration, turns=turns),
                scorer=EnvRewardOnly(),
                envs=SimEnvs(),
            ),
            config,
        )
        for i in range(workers)
    ]
    learner = SimLearner(replay, spec, job_id, clock, train_s)
    start = time.monotonic()
    tasks = [asyncio.create_task(w.run()) for w in pool]
    log = await learner.run(spec.budget.max_steps, take_wait_s=0.2)
    elapsed = time.monotonic() - start
    outcomes = await asyncio.gather(*tasks)
    return PipelineRun(learner=log, elapsed_s=elapsed, outcomes=list(outcomes))
