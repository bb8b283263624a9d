"""Held-out evaluation during training.

After publishing a version the learner asks for an evaluation when the version is on the
eval cadence (`spec.eval.every_n_steps`, plus version 0 and the final version). Episodes
run through the same rollout code as training (inference + environments + reward) on the
eval split at `spec.eval.temperature`, in a background thread so training continues, one
evaluation at a time. Results become `kind="eval"` metric points with `eval_reward`.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable

from services.common.jobspec import JobRuntime

log = logging.getLogger(__name__)

Record = Callable[[int, dict[str, float], str], object]


def is_eval_version(version: int, every_n_steps: int, final_version: int) -> bool:
    if every_n_steps <= 0:
        return False
    return version % every_n_steps == 0 or version == final_version


class Evaluator:
    """Runs evaluations one after another in a daemon thread; `close()` waits for them."""

    def __init__(self, runtime: JobRuntime, record: Record) -> None:
        self.runtime = runtime
        self.record = record
        self._versions: queue.Queue[int | None] = queue.Queue()
        self._thread = threading.Thread(target=self._work, name="evaluator", daemon=True)
        self._thread.start()

    def maybe_request(self, version: int) -> None:
        spec = self.runtime.spec
        if is_eval_version(version, spec.eval.every_n_steps, spec.budget.max_steps):
            self._versions.put(version)

    def close(self, timeout_s: float = 900.0) -> None:
        """Finish the evaluations already asked for (the final one included), then stop."""
        self._versions.put(None)
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            log.warning("evaluation still running after %.0fs; leaving it", timeout_s)

    def _work(self) -> None:
        while (version := self._versions.get()) is not None:
            try:
                values = asyncio.run(self._evaluate(version))
            except Exception as exc:  # an eval failure is reported, never fatal to training
                log.warning("evaluation at version %d failed: %r", version, exc)
                values = {"eval_failed": 1.0}
            self.record(version, values, "eval")

    async def _evaluate(self, version: int) -> dict[str, float]:
        from services.rollout.eval import run_eval

        result = await run_eval(self.runtime, version)
        ok = result.by_status.get("ok", 0)
        values = {
            "eval_reward": result.mean_reward,
            "eval_tasks": float(result.num_tasks),
            "eval_ok_fraction": ok / result.num_tasks if result.num_tasks else 0.0,
        }
        log.info(
            "eval at version %d: reward %.3f over %d tasks",
            version,
            result.mean_reward,
            result.num_tasks,
        )
        return values
