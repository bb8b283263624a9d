"""The training step on a small random Llama: accumulation is exact, every algorithm runs,
LoRA exports merged HF weights."""

from __future__ import annotations

import copy

import pytest
import torch

from learner.distributed import DistContext
from learner.model import hf_state_dict, lora_scaling
from learner.optim import build_optimizer, build_scheduler
from learner.settings import LearnerSettings
from learner.trainer import Trainer, TrainerConfig
from services.common.jobspec import AlgorithmSpec
from services.common.wire import Trajectory

CPU = DistContext(rank=0, world_size=1, local_rank=0, device=torch.device("cpu"))


def small_model() -> torch.nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, head_dim=16, tie_word_embeddings=True,
    )  # fmt: skip
    return LlamaForCausalLM(config)


def batch(n_groups: int = 2, group: int = 4) -> list[Trajectory]:
    gen = torch.Generator().manual_seed(1)
    out = []
    for g in range(n_groups):
        for k in range(group):
            n = 4 + (k % 3)
            ids = torch.randint(0, 64, (3 + n,), generator=gen).tolist()
            out.append(Trajectory(
                job_id="j", task_id=f"t{g}", group_id=f"g{g}", group_size=group, sample_index=k,
                env="e", token_ids=ids, loss_mask=[0] * 3 + [1] * n,
                behavior_logprobs=[0.0] * 3 + [-4.0] * n, policy_versions=[0] * (3 + n),
                reward=float(k % 2 + g),
            ))  # fmt: skip
    return out


def make_trainer(model: torch.nn.Module, algo: AlgorithmSpec, ref=None) -> Trainer:  # type: ignore[no-untyped-def]
    opt = build_optimizer(model, algo)
    cfg = TrainerConfig(algo, LearnerSettings(), 1.0, 16, 0, False)
    return Trainer(model, opt, build_scheduler(opt, algo, 10), cfg, CPU, ref)


def test_micro_batch_accumulation_is_exact() -> None:
    results = []
    for budget in (64, 4096):  # many micro-batches vs one
        model = small_model()
        algo = AlgorithmSpec(learning_rate=1e-2, micro_batch_tokens=budget, max_grad_norm=1e9)
        make_trainer(model, algo).step(batch(), version=0)
        results.append(torch.cat([p.grad.flatten() for p in model.parameters()]))
    assert results[0].abs().max() > 0
    assert torch.allclose(results[0], results[1], atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("advantage", ["grpo", "dr_grpo", "rloo", "reinforce_pp", "gigpo"])
@pytest.mark.parametrize("loss", ["ppo_clip", "gspo", "tis_token", "tis_sequence"])
def test_every_algorithm_steps(advantage: str, loss: str) -> None:
    algo = AlgorithmSpec(advantage=advantage, loss=loss, loss_aggregation="constant",
                         learning_rate=1e-3, entropy_coef=0.01, micro_batch_tokens=64)  # fmt: skip
    model = small_model()
    before = copy.deepcopy(model.state_dict())
    metrics = make_trainer(model, algo).step(batch(), version=2)
    assert all(v == v for v in metrics.values())  # no NaN
    assert metrics["staleness/v2"] == 8.0
    assert any(not torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_kl_to_reference_and_mini_batches() -> None:
    model = small_model()
    ref = copy.deepcopy(model).requires_grad_(False).eval()
    algo = AlgorithmSpec(kl_coef=0.1, learning_rate=1e-2, micro_batch_tokens=64)
    trainer = make_trainer(model, algo, ref)
    first = trainer.step(batch(), 0)
    trainer.cfg.settings = LearnerSettings(updates_per_batch=2)
    second = trainer.step(batch(), 1)
    assert first["kl"] == pytest.approx(0.0, abs=1e-6)  # reference = initial weights
    assert second["kl"] > 0
    assert second["ratio/max"] > 1.0  # 2nd mini-batch ran against moved weights


def test_lora_trains_adapters_and_exports_merged() -> None:
    from peft import LoraConfig, get_peft_model

    base = small_model()
    initial = {k: v.clone() for k, v in base.state_dict().items()}
    model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear"))
    algo = AlgorithmSpec(kl_coef=0.1, learning_rate=1e-2, lora_rank=4)
    metrics = make_trainer(model, algo).step(batch(), 0)  # KL uses the disabled adapter
    assert metrics["kl"] == pytest.approx(0.0, abs=1e-6)
    make_trainer(model, algo).step(batch(), 1)
    out = hf_state_dict(model.state_dict(), tied_embeddings=True,
                        lora_scaling=lora_scaling(model), dtype=torch.float32)  # fmt: skip
    assert set(out) == set(initial) - {"lm_head.weight"}
    changed = [k for k in out if not torch.equal(out[k], initial[k])]
    assert changed and all("proj" in k for k in changed)
