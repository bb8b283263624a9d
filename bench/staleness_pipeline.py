"""Bench: the asynchronous pipeline vs the synchronous baseline under a long-tail
environment step latency.

Real rollout workers (admission loop), the real replay store (memory, or Redis with
--backend redis) with its admission rule and staleness filter; simulated episodes (each
turn waits one env-step latency drawn from a long-tail distribution) and a simulated
learner (fixed train time per step). Runs max_staleness=0 and max_staleness=4 side by
side for the same number of learner steps and prints the ratio.

    .venv/bin/python bench/staleness_pipeline.py [--steps 20] [--backend redis]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import uuid

from services.common.jobspec import JobSpec
from services.replay.async_store import AsyncStore
from services.replay.settings import MemoryBackend, RedisBackend
from services.replay.store import make_store
from services.rollout.sim import PipelineRun, run_pipeline


def long_tail(seed: int, fast_s: float, slow_s: float, p_slow: float):  # type: ignore[no-untyped-def]
    """Env step latency: usually ~fast_s (jittered), with probability p_slow a straggler
    of slow_s to 3 x slow_s (a slow tool, a cold sandbox, a rate-limited API)."""
    rng = random.Random(seed)

    def draw() -> float:
        if rng.random() < p_slow:
            return slow_s * (1 + 2 * rng.random())
        return fast_s * (0.5 + rng.random())

    return draw


def spec_for(max_staleness: int, args: argparse.Namespace) -> JobSpec:
    return JobSpec.model_validate(
        {
            "environments": [{"name": "sim"}],
            "group_size": args.group_size,
            "batch_size": args.batch_size,
            "max_staleness": max_staleness,
            "max_turns": args.turns,
            "budget": {"max_steps": args.steps},
            "resources": {"episodes_per_worker": args.concurrency},
        }
    )


async def one_run(max_staleness: int, args: argparse.Namespace) -> tuple[PipelineRun, dict]:
    job_id = f"bench-s{max_staleness}-{uuid.uuid4().hex[:6]}"
    backend = (
        RedisBackend(prefix="slipstream-bench") if args.backend == "redis" else MemoryBackend()
    )
    store = make_store(backend)
    replay = AsyncStore(store, poll_interval_s=0.005)
    draw = long_tail(args.seed, args.fast_s, args.slow_s, args.p_slow)
    try:
        run = await run_pipeline(
            spec_for(max_staleness, args), replay, job_id, draw, args.train_s,
            workers=args.workers, turns=args.turns,
        )
        stats = store.stats(job_id).model_dump()
    finally:
        store.delete_job(job_id)
        store.close()
    return run, stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20, help="learner steps per run")
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--concurrency", type=int, default=32, help="episodes per worker")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--turns", type=int, default=3, help="env steps per episode")
    parser.add_argument("--fast-s", type=float, default=0.02, help="typical step latency")
    parser.add_argument("--slow-s", type=float, default=0.5, help="straggler step latency")
    parser.add_argument("--p-slow", type=float, default=0.05, help="straggler probability")
    parser.add_argument("--train-s", type=float, default=0.1, help="learner time per step")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backend", choices=["memory", "redis"], default="memory")
    args = parser.parse_args()

    results = {}
    for s in (0, 4):
        run, stats = asyncio.run(one_run(s, args))
        results[s] = run
        episodes = sum(o.episodes for o in run.outcomes)
        print(
            f"max_staleness={s}: {run.learner.steps} steps in {run.elapsed_s:6.2f}s "
            f"({run.elapsed_s / run.learner.steps:.3f}s/step), episodes={episodes}, "
            f"consumed={stats['consumed']}, dropped_stale={run.learner.dropped}, "
            f"max consumed lag={run.learner.max_lag}, "
            f"exits={[o.reason.value for o in run.outcomes]}"
        )
        assert run.learner.max_lag <= s
    ratio = results[0].elapsed_s / results[4].elapsed_s
    print(f"speed-up of max_staleness=4 over 0 (same {args.steps} learner steps): {ratio:.2f}x")


if __name__ == "__main__":
    main()
