"""One learner step on the tiny model at any world size (run directly or under torchrun):
prints `DP {json}` from rank 0. Used by test_learner_fsdp.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from learner_bandit import BanditProducer

from learner.distributed import init_distributed, shutdown
from learner.loop import Learner
from learner.settings import LearnerSettings
from services.common.jobspec import JobRuntime, parse_job_spec


def main(model: str, run_dir: str) -> None:
    torch.set_num_threads(1)
    spec = parse_job_spec({
        "environments": [{"name": "bandit"}], "model": {"name": model},
        "group_size": 4, "batch_size": 8, "budget": {"max_steps": 1},
        "algorithm": {"micro_batch_tokens": 64}, "checkpoint": {"every_n_steps": 1},
    })  # fmt: skip
    rt = JobRuntime(job_id="dp", spec=spec, run_dir=run_dir,
                    endpoints={"inference": "http://127.0.0.1:9"})  # fmt: skip
    ctx = init_distributed("cpu", 120)
    learner = Learner(rt, LearnerSettings(evaluate=False), ctx, None)
    learner.setup()
    trajs = BanditProducer(Path(model), "dp", group_size=4, seed=0).produce(2)
    metrics = learner.trainer.step(trajs, 0)
    learner.state.version = 1
    learner.save_checkpoint()
    learner.export_final()
    if ctx.is_main:
        sys.stdout.write("DP " + json.dumps({"world": ctx.world_size, **metrics}) + "\n")
    shutdown(ctx)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
