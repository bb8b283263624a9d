"""The product loop end to end: `slipstream run SPEC` starts every service as a real process,
submits the job, follows it, writes the reward curve and the final checkpoint, and stops the
stack; a failing job makes it exit non-zero with the reason."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.procs import free_port

from services.common.topology import SERVICES

pytestmark = pytest.mark.slow

SMOKE_SPEC = """
name: e2e-smoke
model: {{name: "{model}", engine: hf, max_model_len: 512}}
environments: [{{name: arithmetic, task_set: easy, options: {{tools: false}}}}]
algorithm: {{learning_rate: 1.0e-4}}
sampling: {{max_tokens_per_turn: 8, max_episode_tokens: 128}}
group_size: 4
batch_size: 8
max_staleness: 1
max_turns: 1
budget: {{max_steps: 3}}
eval: {{every_n_steps: 2, num_tasks: 8}}
checkpoint: {{every_n_steps: 2}}
resources: {{episodes_per_worker: 8}}
"""


@pytest.fixture
def stack_env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "SLIPSTREAM_HOME": str(tmp_path / "home"), "COLUMNS": "160"}
    for entry in SERVICES:
        env[f"SLIPSTREAM_{entry.name.upper()}_PORT"] = str(free_port())
    return env


def _run(spec: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "services.cli.main", "run", str(spec)],
        env=env, capture_output=True, text=True, timeout=900,
    )


def _pids_left(home: Path) -> list[str]:
    return [p.name for p in (home / "run").glob("*.pid")]


def test_run_trains_writes_curve_and_checkpoint(
    tiny_model_path: Path, tmp_path: Path, stack_env: dict[str, str]
) -> None:
    spec = tmp_path / "smoke.yaml"
    spec.write_text(SMOKE_SPEC.format(model=tiny_model_path))
    result = _run(spec, stack_env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "completed" in result.stdout
    home = Path(stack_env["SLIPSTREAM_HOME"])
    (run_dir,) = (home / "runs").iterdir()
    rows = list(csv.DictReader((run_dir / "reward_curve.csv").open()))
    assert {int(r["step"]) for r in rows if r["kind"] == "train"} == {1, 2, 3}
    assert {int(r["step"]) for r in rows if r["kind"] == "eval"} == {0, 2, 3}
    assert (run_dir / "reward_curve.png").stat().st_size > 0
    assert (run_dir / "final" / "model.safetensors").exists()
    assert _pids_left(home) == []  # `run` started the stack, so it stopped it


def test_failing_job_exits_non_zero_with_the_reason(
    tiny_model_path: Path, tmp_path: Path, stack_env: dict[str, str]
) -> None:
    spec = tmp_path / "broken.yaml"
    broken = SMOKE_SPEC.format(model=tiny_model_path).replace(
        "name: arithmetic", "name: no-such-env"
    )
    spec.write_text(broken)
    result = _run(spec, stack_env)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "error: job" in result.stderr and "failed" in result.stderr
    assert _pids_left(Path(stack_env["SLIPSTREAM_HOME"])) == []
