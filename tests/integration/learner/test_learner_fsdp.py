"""One code path: the same step under torchrun (2 gloo ranks, FSDP2) and in-process gives
the same gradient norm and metrics, and rank 0 writes the checkpoints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ROOT = HERE.parents[2]


def run(cmd: list[str]) -> dict[str, float]:
    env = os.environ | {"OMP_NUM_THREADS": "1", "PYTHONPATH": f"{HERE}:{ROOT}"}
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    line = next(x for x in out.stdout.splitlines() if x.startswith("DP "))
    return json.loads(line[3:])


@pytest.mark.slow
def test_two_gloo_ranks_match_one_process(tiny_model_path: Path, tmp_path: Path) -> None:
    script = str(HERE / "learner_dp_step.py")
    one = run([sys.executable, script, str(tiny_model_path), str(tmp_path / "one")])
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                "--master_port", "29631"]  # fmt: skip
    two = run([*torchrun, script, str(tiny_model_path), str(tmp_path / "two")])
    assert two["world"] == 2 and one["world"] == 1
    for key in ("grad_norm", "num_tokens", "num_sequences", "loss/policy", "entropy"):
        assert two[key] == pytest.approx(one[key], rel=1e-4, abs=1e-6), key
    assert (tmp_path / "two" / "final" / "model.safetensors").is_file()
    assert (tmp_path / "two" / "checkpoints" / "v00000001" / "state.json").is_file()
