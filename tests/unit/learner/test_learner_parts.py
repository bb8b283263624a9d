"""Batching, schedules, checkpoints, LoRA merge, metrics helpers."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from learner import checkpoint as ckpt
from learner.batching import Sample, collate, plan_micro_batches
from learner.metrics import MetricsSink, staleness_histogram
from learner.model import hf_state_dict, merge_lora
from learner.optim import lr_factor
from services.common.wire import MetricPoint


def test_plan_respects_token_budget() -> None:
    lengths = [10, 50, 20, 40, 30]
    plans = plan_micro_batches(lengths, 100)
    assert sorted(i for p in plans for i in p) == [0, 1, 2, 3, 4]
    for plan in plans:
        assert len(plan) * max(lengths[i] for i in plan) <= 100
    assert plan_micro_batches([300], 100) == [[0]]  # too long: alone


def test_collate_aligns_targets() -> None:
    s = Sample([5, 6, 7], [0, 1, 1], [0.0, -0.5, -0.7], torch.tensor([0.0, 2.0, 3.0]), 0, 1.0)
    short = Sample([8, 9], [0, 1], [0.0, -0.1], torch.tensor([0.0, 4.0]), 1, 0.0)
    mb = collate([s, short], [0, 1], pad_id=0)
    assert mb.input_ids.tolist() == [[5, 6, 7], [8, 9, 0]]
    assert mb.attention_mask.tolist() == [[1, 1, 1], [1, 1, 0]]
    assert mb.mask.tolist() == [[1.0, 1.0], [1.0, 0.0]]
    assert mb.behav.flatten().tolist() == pytest.approx([-0.5, -0.7, -0.1, 0.0])
    assert mb.adv.tolist() == [[2.0, 3.0], [4.0, 0.0]]


@pytest.mark.parametrize(
    ("schedule", "step", "expected"),
    [
        ("constant", 0, 0.5),  # warm-up 2: (0 + 1) / 2
        ("constant", 7, 1.0),
        ("linear", 2, 1.0),
        ("linear", 7, 0.375),  # p = 5 / 8
        ("cosine", 6, 0.5),  # p = 4 / 8 -> 0.5 (1 + cos(pi / 2))
        ("cosine", 20, 0.0),
    ],
)
def test_lr_schedule(schedule: str, step: int, expected: float) -> None:
    assert lr_factor(step, schedule, warmup=2, total=10) == pytest.approx(expected)


def test_staleness_histogram() -> None:
    h = staleness_histogram([0, 0, 1, 2])
    assert h == {"staleness/v0": 2.0, "staleness/v1": 1.0, "staleness/v2": 1.0,
                 "staleness/mean": 0.75, "staleness/max": 2.0}  # fmt: skip


def test_metrics_sink_writes_metric_points(tmp_path: Path) -> None:
    sink = MetricsSink(tmp_path, "job-1", api_url="http://127.0.0.1:9", timeout_s=0.5)
    sink.record(3, {"loss/total": 1.5})  # the API is down: best effort, still on disk
    sink.close()
    point = MetricPoint.model_validate_json((tmp_path / "metrics.jsonl").read_text())
    assert point.step == 3 and point.values == {"loss/total": 1.5}
    assert sink.api_failures == 1


def test_merge_lora_and_hf_names() -> None:
    base = torch.ones(2, 3)
    a, b = torch.ones(1, 3), torch.full((2, 1), 2.0)
    state = {
        "base_model.model.model.layers.0.q_proj.base_layer.weight": base,
        "base_model.model.model.layers.0.q_proj.lora_A.default.weight": a,
        "base_model.model.model.layers.0.q_proj.lora_B.default.weight": b,
        "base_model.model.lm_head.weight": torch.zeros(4, 3),
    }
    merged = merge_lora(state, scaling=0.5)
    assert set(merged) == {"model.layers.0.q_proj.weight", "lm_head.weight"}
    assert merged["model.layers.0.q_proj.weight"].tolist() == [[2.0] * 3] * 2  # 1 + 0.5 * 2
    out = hf_state_dict(state, tied_embeddings=True, lora_scaling=0.5, dtype=torch.bfloat16)
    assert set(out) == {"model.layers.0.q_proj.weight"}
    assert out["model.layers.0.q_proj.weight"].dtype == torch.bfloat16


def test_resumable_checkpoint_roundtrip_and_prune(tmp_path: Path) -> None:
    model = torch.nn.Linear(2, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=0.1)
    model(torch.ones(1, 2)).sum().backward()
    opt.step()
    for version in (1, 2, 3):
        state = ckpt.LearnerState(version=version, last_batch_id=f"b{version}")
        ckpt.save_resumable(tmp_path, model.state_dict(), opt.state_dict(), {"x": 1}, state)
    ckpt.prune_checkpoints(tmp_path, keep_last=2)
    assert [p.name for p in ckpt.list_checkpoints(tmp_path)] == ["v00000002", "v00000003"]
    weights, optim, sched, _rng, state = ckpt.load_resumable(ckpt.latest_checkpoint(tmp_path))
    assert state.version == 3 and state.last_batch_id == "b3" and sched == {"x": 1}
    assert torch.equal(weights["weight"], model.weight.detach())
    fresh = torch.optim.AdamW(torch.nn.Linear(2, 2).parameters(), lr=0.1)
    fresh.load_state_dict(optim)
    assert fresh.state_dict()["state"][0]["step"] == 1
    # an interrupted save (no state.json) is never picked
    (tmp_path / "checkpoints" / "v00000009").mkdir()
    assert ckpt.latest_checkpoint(tmp_path).name == "v00000003"


def test_prune_policies_keeps_protected(tmp_path: Path) -> None:
    for v in range(6):
        (tmp_path / "policy" / f"v{v}").mkdir(parents=True)
    ckpt.prune_policies(tmp_path, keep=2, protect={1})
    assert sorted(p.name for p in (tmp_path / "policy").iterdir()) == ["v1", "v4", "v5"]
