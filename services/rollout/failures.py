"""Failure accounting: a bad episode is data, but a worker whose episodes keep failing
(a dead environment server, a broken inference endpoint) stops with a clear reason."""

from __future__ import annotations

from collections import deque

from services.common.wire import Trajectory, TrajectoryStatus
from services.rollout.settings import WorkerConfig

FAILED = {TrajectoryStatus.ENV_ERROR, TrajectoryStatus.ABORTED}


class FailureTracker:
    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.consecutive = 0
        self.total = 0
        self.window: deque[bool] = deque(maxlen=config.failure_window)
        self.last: str | None = None

    def record(self, traj: Trajectory) -> None:
        failed = traj.status in FAILED and not (
            traj.error is not None and traj.error.kind == "cancelled"
        )
        self.window.append(failed)
        if failed:
            self.consecutive += 1
            self.total += 1
            err = traj.error
            self.last = f"{err.kind}: {err.message}" if err else traj.status.value
        else:
            self.consecutive = 0

    def verdict(self) -> str | None:
        """Why the worker must stop, or None."""
        c = self.config
        if self.consecutive >= c.max_consecutive_failures:
            return f"{self.consecutive} episodes failed in a row (last: {self.last})"
        full = len(self.window) == self.window.maxlen
        if full and sum(self.window) / len(self.window) >= c.max_failure_rate:
            return (
                f"{sum(self.window)} of the last {len(self.window)} episodes failed "
                f"(last: {self.last})"
            )
        return None
