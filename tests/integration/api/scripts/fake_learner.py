"""Stands in for `python -m learner` in runner tests: reads its JobRuntime, posts metric
points to the API with the per-job token, then exits with the asked-for code."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from services.api.client import ApiClient
from services.common.jobspec import JobRuntime
from services.common.wire import MetricPoint


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runtime", required=True)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--step-s", type=float, default=0.1)
    parser.add_argument("--exit", type=int, default=0)
    parser.add_argument("--child", action="store_true", help="spawn a grandchild sleeper")
    parser.add_argument("--no-post", action="store_true", help="do not talk to the API")
    args = parser.parse_args()
    runtime = JobRuntime.model_validate_json(Path(args.runtime).read_text())
    run_dir = Path(runtime.run_dir)
    (run_dir / "learner.pid").write_text(str(os.getpid()))
    if args.child:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        (run_dir / "learner-child.pid").write_text(str(child.pid))
    print(f"learner for {runtime.job_id}: {args.steps} steps", flush=True)
    client = None if args.no_post else ApiClient(os.environ["SLIPSTREAM_API_URL"])
    for step in range(args.steps):
        time.sleep(args.step_s)
        values = {"reward_mean": step / max(args.steps, 1), "loss": 1.0 / (step + 1)}
        if client is not None:
            client.post_metrics(
                runtime.job_id, [MetricPoint(job_id=runtime.job_id, step=step, values=values)]
            )
        print(f"step {step} reward {values['reward_mean']:.3f}", flush=True)
    if args.exit:
        print(f"fatal: giving up with code {args.exit}", flush=True)
    sys.exit(args.exit)


if __name__ == "__main__":
    main()
