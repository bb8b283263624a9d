"""From trajectories to padded, target-aligned micro-batches planned by token budget.

Target alignment: position j of every [B, T] tensor (T = L - 1) describes token j + 1 of
the sequence, predicted by the logits at position j. Token 0 is never trained.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor

from services.common.wire import Trajectory


@dataclass
class Sample:
    """One trajectory ready to train on."""

    token_ids: list[int]
    loss_mask: list[int]
    behavior_logprobs: list[float]
    advantages: Tensor
    staleness: int
    reward: float

    @property
    def length(self) -> int:
        return len(self.token_ids)

    @property
    def num_loss_tokens(self) -> int:
        return int(sum(self.loss_mask[1:]))


def to_samples(trajs: list[Trajectory], advantages: list[Tensor], version: int) -> list[Sample]:
    return [
        Sample(
            token_ids=list(t.token_ids),
            loss_mask=list(t.loss_mask),
            behavior_logprobs=list(t.behavior_logprobs),
            advantages=a,
            staleness=max(version - t.oldest_version, 0),
            reward=t.reward,
        )
        for t, a in zip(trajs, advantages, strict=True)
    ]


def plan_micro_batches(lengths: list[int], token_budget: int) -> list[list[int]]:
    """Greedy packing of sequence indices, longest first, so that each micro-batch's padded
    size (count x longest) stays within `token_budget`; a longer sequence goes alone."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    plans: list[list[int]] = []
    current: list[int] = []
    for i in order:
        longest = lengths[current[0]] if current else lengths[i]
        if current and (len(current) + 1) * longest > token_budget:
            plans.append(current)
            current = []
        current.append(i)
    if current:
        plans.append(current)
    return plans


@dataclass
class MicroBatch:
    input_ids: Tensor  # [B, L] long, right-padded
    attention_mask: Tensor  # [B, L] long
    mask: Tensor  # [B, T] float, 1 where token j + 1 is trained
    behav: Tensor  # [B, T] behaviour logprobs
    adv: Tensor  # [B, T]
    indices: list[int]  # sample indices in the step's sample list
    prox: Tensor | None = None  # [B, T], filled by the proximal pass
    ref: Tensor | None = None  # [B, T], filled when a KL term is used
    extra: dict[str, Tensor] = field(default_factory=dict)

    @property
    def num_tokens(self) -> int:
        return int(self.attention_mask.sum())

    def to(self, device: torch.device) -> MicroBatch:
        def move(x: Tensor | None) -> Tensor | None:
            return None if x is None else x.to(device)

        return MicroBatch(
            self.input_ids.to(device),
            self.attention_mask.to(device),
            self.mask.to(device),
            self.behav.to(device),
            self.adv.to(device),
            self.indices,
            move(self.prox),
            move(self.ref),
        )


def collate(samples: list[Sample], indices: list[int], pad_id: int) -> MicroBatch:
    chosen = [samples[i] for i in indices]
    width = max(s.length for s in chosen)
    b = len(chosen)
    ids = torch.full((b, width), pad_id, dtype=torch.long)
    attn = torch.zeros((b, width), dtype=torch.long)
    mask = torch.zeros((b, width), dtype=torch.float32)
    behav = torch.zeros((b, width), dtype=torch.float32)
    advs = torch.zeros((b, width), dtype=torch.float32)
    for row, s in enumerate(chosen):
        n = s.length
        ids[row, :n] = torch.tensor(s.token_ids, dtype=torch.long)
        attn[row, :n] = 1
        mask[row, :n] = torch.tensor(s.loss_mask, dtype=torch.float32)
        behav[row, :n] = torch.tensor(s.behavior_logprobs, dtype=torch.float32)
        advs[row, :n] = s.advantages.float()
    return MicroBatch(ids, attn, mask[:, 1:], behav[:, 1:], advs[:, 1:], list(indices))


def dummy_micro_batch(pad_id: int) -> MicroBatch:
    """A zero-weight micro-batch for a data-parallel rank that has run out of data, so every
    rank runs the same number of forward/backward passes (FSDP collectives must match)."""
    sample = Sample([pad_id, pad_id], [0, 0], [0.0, 0.0], torch.zeros(2), 0, 0.0)
    batch = collate([sample], [0], pad_id)
    batch.indices = []
    return batch
