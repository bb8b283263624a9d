"""Score finished episodes (one scorer call per group) and write rewards back."""

from __future__ import annotations

import asyncio
import logging
import time

from services.common.wire import ScoreItem, Trajectory, TrajectoryStatus
from services.rollout.backends import RewardScorer
from services.rollout.episode import EpisodeResult

log = logging.getLogger(__name__)
SCORED = {TrajectoryStatus.OK, TrajectoryStatus.TRUNCATED}


def score_item(result: EpisodeResult) -> ScoreItem:
    traj = result.trajectory
    return ScoreItem(
        env=traj.env,
        task_set=str(traj.metadata.get("task_set", "default")),
        task_id=traj.task_id,
        task_type=result.task_type or traj.task_type,
        final_answer=result.final_answer,
        messages=traj.messages,
        env_reward=result.env_reward,
    )


async def score_results(
    scorer: RewardScorer, results: list[EpisodeResult], timeout_s: float
) -> list[Trajectory]:
    """Rewards for episodes that ended normally (ok/truncated); failed episodes keep 0.
    A scorer failure is recorded in `reward_error` (reward 0), never raised."""
    trajs = [r.trajectory for r in results]
    todo = [(r.trajectory, score_item(r)) for r in results if r.trajectory.status in SCORED]
    if not todo:
        return trajs
    start = time.perf_counter()
    try:
        scores = await asyncio.wait_for(scorer.score([item for _, item in todo]), timeout_s)
    except Exception as exc:
        log.warning("scoring %d episodes failed: %r", len(todo), exc)
        for traj, _ in todo:
            traj.reward_error = f"{type(exc).__name__}: {exc}"
    else:
        for (traj, _), score in zip(todo, scores, strict=True):
            traj.reward = score.reward if score.ok else 0.0
            traj.reward_error = None if score.ok else (score.error or "verifier failed")
            traj.metadata["verifier"] = score.verifier
    elapsed = time.perf_counter() - start
    for traj, _ in todo:
        traj.timings.reward_s = elapsed
    return trajs
