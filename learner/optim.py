"""AdamW and the learning-rate schedule (linear warm-up, then constant/cosine/linear)."""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.optim.lr_scheduler import LambdaLR

from services.common.jobspec import AlgorithmSpec


def build_optimizer(model: nn.Module, algo: AlgorithmSpec) -> torch.optim.AdamW:
    params = [p for p in model.parameters() if p.requires_grad]
    return torch.optim.AdamW(
        params, lr=algo.learning_rate, weight_decay=algo.weight_decay, betas=(0.9, 0.999)
    )


def lr_factor(step: int, schedule: str, warmup: int, total: int, floor: float = 0.0) -> float:
    """Multiplier of the peak LR at optimizer step `step` (0-based):
    warm-up: (step + 1) / warmup for step < warmup; then with p = progress in [0, 1]
    after warm-up: constant 1; linear 1 - p; cosine 0.5 (1 + cos(pi p)); never below floor."""
    if step < warmup:
        return (step + 1) / warmup
    if schedule == "constant":
        return 1.0
    span = max(total - warmup, 1)
    p = min(max(step - warmup, 0) / span, 1.0)
    value = 1.0 - p if schedule == "linear" else 0.5 * (1.0 + math.cos(math.pi * p))
    return max(value, floor)


def build_scheduler(
    optimizer: torch.optim.Optimizer, algo: AlgorithmSpec, total_steps: int
) -> LambdaLR:
    return LambdaLR(
        optimizer,
        lambda step: lr_factor(step, algo.lr_schedule, algo.warmup_steps, total_steps),
    )
