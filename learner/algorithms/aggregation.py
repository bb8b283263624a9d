"""Loss aggregation: reduce a per-token loss [B, T] with its mask to a scalar.

Normalisers are arguments so that gradient accumulation over micro-batches (and data
parallel ranks) reproduces the full-batch value exactly: pass the totals of the whole
batch; they default to this tensor's own totals.
"""

from __future__ import annotations

from torch import Tensor


def token_mean(loss: Tensor, mask: Tensor, num_tokens: float | None = None) -> Tensor:
    """sum_{i,t} m_{i,t} l_{i,t} / N_tokens (N_tokens = sum m by default)."""
    denom = float(mask.sum()) if num_tokens is None else num_tokens
    return (loss * mask).sum() / max(denom, 1.0)


def sequence_mean(loss: Tensor, mask: Tensor, num_sequences: float | None = None) -> Tensor:
    """(1 / N_seq) sum_i [sum_t m_{i,t} l_{i,t} / sum_t m_{i,t}]; N_seq counts sequences
    with at least one trained token by default."""
    lengths = mask.sum(-1)
    per_seq = (loss * mask).sum(-1) / lengths.clamp(min=1)
    denom = float((lengths > 0).sum()) if num_sequences is None else num_sequences
    return per_seq.sum() / max(denom, 1.0)


def constant_normalizer(
    loss: Tensor, mask: Tensor, max_tokens: int, num_sequences: float | None = None
) -> Tensor:
    """Dr.GRPO: sum_{i,t} m_{i,t} l_{i,t} / (N_seq * L_max), L_max a constant (the token
    budget of a sample), so long and short answers are not weighted differently."""
    denom = float(mask.shape[0]) if num_sequences is None else num_sequences
    return (loss * mask).sum() / max(denom * max_tokens, 1.0)


def normalizers(mask: Tensor) -> dict[str, float]:
    """This tensor's totals, to be summed over micro-batches and ranks."""
    lengths = mask.sum(-1)
    return {
        "num_tokens": float(mask.sum()),
        "num_sequences": float((lengths > 0).sum()),
    }
