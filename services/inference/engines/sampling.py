"""Token sampling for the `hf` engine: temperature, top-k, top-p, per-request seeds, and the
log-probability of each sampled token under the distribution the settings name."""

from __future__ import annotations

from typing import Any

import torch

from services.common.wire import SamplingParams


def filtered_logits(logits: torch.Tensor, params: SamplingParams) -> torch.Tensor:
    """Temperature-scaled logits with top-k/top-p outside the nucleus set to -inf (fp32)."""
    scaled = logits.float() / params.temperature
    if 0 < params.top_k < scaled.shape[-1]:
        kth = torch.topk(scaled, params.top_k).values[-1]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    if params.top_p < 1.0:
        sorted_logits, order = torch.sort(scaled, descending=True)
        cumulative = torch.softmax(sorted_logits, dim=-1).cumsum(dim=-1)
        drop_sorted = cumulative - torch.softmax(sorted_logits, dim=-1) >= params.top_p
        drop = torch.zeros_like(drop_sorted).scatter(0, order, drop_sorted)
        scaled = scaled.masked_fill(drop, float("-inf"))
    return scaled


def sample_token(
    logits: torch.Tensor,
    params: SamplingParams,
    generator: torch.Generator | None,
    processed: bool,
) -> tuple[int, float]:
    """Sample one token from a 1-D logits row; return (token id, its logprob)."""
    raw = torch.log_softmax(logits.float(), dim=-1)
    if params.temperature == 0.0:
        token = int(torch.argmax(logits))
        return token, float(raw[token])
    scaled = filtered_logits(logits, params)
    logprobs = torch.log_softmax(scaled, dim=-1)
    token = int(torch.multinomial(logprobs.exp(), 1, generator=generator))
    return token, float(logprobs[token] if processed else raw[token])


def make_generator(seed: int | None, fallback: torch.Generator) -> Any:
    if seed is None:
        return fallback
    gen = torch.Generator()
    gen.manual_seed(seed)
    return gen
