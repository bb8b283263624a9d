"""It learns: the tiny model trained through the real replay store on a bandit task."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import torch
from learner_bandit import BanditProducer

from learner.distributed import DistContext
from learner.loop import Learner
from learner.replay import ReplayAdapter
from learner.settings import LearnerSettings
from services.common.jobspec import Endpoints, JobRuntime, parse_job_spec
from services.replay.memory import MemoryStore

JOB = "learner-learns"
STEPS = 24


def runtime(model: Path, run_dir: Path) -> JobRuntime:
    spec = parse_job_spec({
        "seed": 0,
        "environments": [{"name": "bandit"}],
        "model": {"name": str(model), "engine": "hf"},
        "group_size": 8,
        "batch_size": 32,
        "max_staleness": 1,
        "budget": {"max_steps": STEPS},
        "algorithm": {"advantage": "grpo", "loss": "ppo_clip", "learning_rate": 1e-2},
        "sampling": {"max_episode_tokens": 64},
        "checkpoint": {"every_n_steps": 8, "keep_last": 2},
    })  # fmt: skip
    # nothing listens on port 9: publication to inference fails fast and is counted
    endpoints = Endpoints(inference="http://127.0.0.1:9", api=None)
    return JobRuntime(job_id=JOB, spec=spec, endpoints=endpoints, run_dir=str(run_dir))


@pytest.mark.slow
def test_mean_reward_rises(tiny_model_path: Path, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    store = MemoryStore()
    ctx = DistContext(0, 1, 0, torch.device("cpu"))
    settings = LearnerSettings(take_wait_s=0, evaluate=False)
    learner = Learner(runtime(tiny_model_path, tmp_path), settings, ctx, ReplayAdapter(store))
    learner.setup()
    producer = BanditProducer(tiny_model_path, JOB, group_size=8, seed=0)
    while learner.budget_reason() is None:
        pub = store.latest_publication(JOB)
        assert pub is not None
        producer.load(pub.checkpoint_path, pub.version)
        store.put_many(producer.produce(4))
        assert learner.step_once()
    assert learner.run() == "max_steps"
    learner.close()

    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    curve = [r["values"]["reward/mean"] for r in rows]
    (tmp_path / "reward_curve.json").write_text(json.dumps(curve))
    if os.environ.get("SLIPSTREAM_ARTIFACTS"):
        shutil.copy(tmp_path / "reward_curve.json", os.environ["SLIPSTREAM_ARTIFACTS"])
    start, end = sum(curve[:5]) / 5, sum(curve[-5:]) / 5
    assert len(curve) == STEPS
    assert end > start + 0.2, f"reward did not rise: {curve}"
    assert [r["step"] for r in rows] == list(range(1, STEPS + 1))
    assert all(r["values"]["staleness/max"] <= 1 for r in rows)
    assert store.latest_publication(JOB).version == STEPS

    from transformers import AutoModelForCausalLM, AutoTokenizer

    final = AutoModelForCausalLM.from_pretrained(str(tmp_path / "final"))
    AutoTokenizer.from_pretrained(str(tmp_path / "final"))
    trained = {k: v for k, v in learner.model.state_dict().items()}
    for name, value in final.state_dict().items():
        assert torch.allclose(value, trained[name]), name
