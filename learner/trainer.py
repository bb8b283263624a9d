"""One learner step: advantages -> proximal logprobs -> accumulated policy update(s)."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from learner.algorithms import AGGREGATIONS, POLICY_LOSSES, LossInputs, Normalizers
from learner.algorithms.losses import kl_k3
from learner.batching import MicroBatch, Sample, collate, dummy_micro_batch, plan_micro_batches
from learner.batching import to_samples as build_samples
from learner.credit import token_advantages
from learner.distributed import (
    DistContext,
    all_reduce_max,
    all_reduce_max_floats,
    all_reduce_sum,
)
from learner.metrics import staleness_histogram
from learner.model import token_logprobs
from learner.settings import LearnerSettings
from services.common.jobspec import AlgorithmSpec
from services.common.wire import Trajectory

log = logging.getLogger(__name__)

# Masked sums accumulated over micro-batches, then summed over ranks.
_SUM_KEYS = (
    "ratio", "clipped", "behavior_ratio", "behavior_truncated", "entropy", "kl",
)  # fmt: skip


@dataclass
class TrainerConfig:
    algorithm: AlgorithmSpec
    settings: LearnerSettings
    temperature: float
    max_tokens: int  # the constant of Dr.GRPO's aggregation
    pad_id: int
    bf16: bool


class Trainer:
    def __init__(
        self,
        model: nn.Module,
        optimizer: torch.optim.Optimizer,
        scheduler: Any,
        config: TrainerConfig,
        ctx: DistContext,
        ref_model: nn.Module | None = None,
    ) -> None:
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.cfg = config
        self.algo = config.algorithm
        self.ctx = ctx
        self.ref_model = ref_model

    # ------------------------------------------------------------------ helpers

    def _autocast(self) -> contextlib.AbstractContextManager[Any]:
        if not self.cfg.bf16:
            return contextlib.nullcontext()
        return torch.autocast(self.ctx.device.type, dtype=torch.bfloat16)

    def _local_indices(self, samples: list[Sample]) -> list[int]:
        """This rank's share: round-robin over sequences sorted by length (token balance)."""
        order = sorted(range(len(samples)), key=lambda i: -samples[i].length)
        return order[self.ctx.rank :: self.ctx.world_size]

    def _plan(self, samples: list[Sample], indices: list[int]) -> list[MicroBatch]:
        lengths = [samples[i].length for i in indices]
        plans = plan_micro_batches(lengths, self.algo.micro_batch_tokens) if indices else []
        batches = [collate(samples, [indices[j] for j in p], self.cfg.pad_id) for p in plans]
        total = all_reduce_max(len(batches), self.ctx)
        batches += [dummy_micro_batch(self.cfg.pad_id) for _ in range(total - len(batches))]
        return [b.to(self.ctx.device) for b in batches]

    def _reference_logprobs(self, batch: MicroBatch) -> Tensor:
        if self.ref_model is not None:
            return token_logprobs(self.ref_model, batch, self.cfg.temperature)[0]
        disable = getattr(self.model, "disable_adapter", None)
        if disable is None:
            raise RuntimeError("kl_coef > 0 needs a reference model or a LoRA adapter")
        with disable():
            return token_logprobs(self.model, batch, self.cfg.temperature)[0]

    @torch.no_grad()
    def _proximal_pass(self, batches: list[MicroBatch]) -> None:
        """Recompute log pi_prox (the weights at the start of the step) for every token."""
        self.model.eval()
        with self._autocast():
            for batch in batches:
                batch.prox = token_logprobs(self.model, batch, self.cfg.temperature)[0].float()
                if self.algo.kl_coef > 0:
                    batch.ref = self._reference_logprobs(batch).float()
        self.model.train()

    def _normalizers(self, batches: list[MicroBatch]) -> Normalizers:
        tokens = sum(float(b.mask.sum()) for b in batches)
        seqs = sum(float((b.mask.sum(-1) > 0).sum()) for b in batches)
        tokens, seqs = all_reduce_sum([tokens, seqs], self.ctx)
        return Normalizers(tokens, seqs, self.cfg.max_tokens)

    def _micro_step(
        self, batch: MicroBatch, norms: Normalizers, sums: dict[str, float]
    ) -> dict[str, float]:
        algo = self.algo
        want_entropy_grad = algo.entropy_coef > 0
        with self._autocast():
            logp, entropy = token_logprobs(
                self.model, batch, self.cfg.temperature, entropy=True,
                entropy_grad=want_entropy_grad,
            )  # fmt: skip
        assert batch.prox is not None and entropy is not None
        inputs = LossInputs(logp, batch.prox, batch.behav, batch.adv, batch.mask)
        per_token, stats = POLICY_LOSSES[algo.loss](inputs, algo)
        aggregate = AGGREGATIONS[algo.loss_aggregation]
        policy = aggregate(per_token, batch.mask, norms)
        total = policy
        terms = {"loss/policy": float(policy.detach())}
        if algo.kl_coef > 0 and batch.ref is not None:
            kl = kl_k3(logp, batch.ref, batch.mask)
            kl_loss = aggregate(kl, batch.mask, norms)
            total = total + algo.kl_coef * kl_loss
            terms["loss/kl"] = float(kl_loss.detach())
            sums["kl"] += float((kl.detach() * batch.mask).sum())
        if want_entropy_grad:
            ent_loss = aggregate(entropy, batch.mask, norms)
            total = total - algo.entropy_coef * ent_loss
            terms["loss/entropy_bonus"] = -algo.entropy_coef * float(ent_loss.detach())
        (total * self.ctx.world_size).backward()  # FSDP averages gradients over ranks
        mask = batch.mask
        for key in ("ratio", "clipped", "behavior_ratio", "behavior_truncated"):
            sums[key] += float((stats[key] * mask).sum())
        sums["entropy"] += float((entropy.detach() * mask).sum())
        for key in ("ratio", "behavior_ratio"):
            masked = torch.where(mask.bool(), stats[key], torch.zeros_like(stats[key]))
            sums[f"max_{key}"] = max(sums[f"max_{key}"], float(masked.max()) if mask.any() else 0.0)
        terms["loss/total"] = float(total.detach())
        return terms

    def _update(self, batches: list[MicroBatch], sums: dict[str, float]) -> dict[str, float]:
        norms = self._normalizers(batches)
        self.optimizer.zero_grad(set_to_none=True)
        terms: dict[str, float] = {}
        for batch in batches:
            for key, value in self._micro_step(batch, norms, sums).items():
                terms[key] = terms.get(key, 0.0) + value
        grad_norm = torch.nn.utils.clip_grad_norm_(
            [p for p in self.model.parameters() if p.requires_grad], self.algo.max_grad_norm
        )
        self.optimizer.step()
        self.scheduler.step()
        terms["grad_norm"] = float(
            grad_norm.full_tensor() if hasattr(grad_norm, "full_tensor") else grad_norm
        )
        return terms

    def _mini_batches(self, samples: list[Sample]) -> Iterator[list[int]]:
        local = self._local_indices(samples)
        k = self.cfg.settings.updates_per_batch
        for chunk in range(k):
            yield local[chunk::k]

    # --------------------------------------------------------------------- step

    def step(self, trajectories: list[Trajectory], version: int) -> dict[str, float]:
        """Train on one batch taken at `version`; returns this step's metrics."""
        start = time.perf_counter()
        settings = self.cfg.settings
        advantages = token_advantages(
            trajectories, self.algo.advantage, settings.gamma, settings.gigpo_omega
        )
        samples = build_samples(trajectories, advantages, version)
        plans = [self._plan(samples, idx) for idx in self._mini_batches(samples)]
        self._proximal_pass([b for plan in plans for b in plan])
        sums = {key: 0.0 for key in _SUM_KEYS} | {"max_ratio": 0.0, "max_behavior_ratio": 0.0}
        terms: dict[str, float] = {}
        for plan in plans:
            for key, value in self._update(plan, sums).items():
                terms[key] = terms.get(key, 0.0) + value / len(plans)
        elapsed = time.perf_counter() - start
        return self._metrics(samples, plans, sums, terms, elapsed)

    def _metrics(
        self,
        samples: list[Sample],
        plans: list[list[MicroBatch]],
        sums: dict[str, float],
        terms: dict[str, float],
        elapsed: float,
    ) -> dict[str, float]:
        batches = [b for plan in plans for b in plan]
        local_tokens = float(sum(b.num_tokens for b in batches if b.indices))
        loss_tokens = float(sum(float(b.mask.sum()) for b in batches))
        keys = list(_SUM_KEYS)
        totals = all_reduce_sum([sums[k] for k in keys] + [local_tokens, loss_tokens], self.ctx)
        reduced = dict(zip(keys, totals[: len(keys)], strict=True))
        tokens, n_loss = totals[-2], max(totals[-1], 1.0)
        loss_keys = sorted(k for k in terms if k.startswith("loss/"))
        summed = all_reduce_sum([terms[k] for k in loss_keys], self.ctx)  # rank shares add up
        terms = terms | dict(zip(loss_keys, summed, strict=True))
        max_ratio, max_behav = all_reduce_max_floats(
            [sums["max_ratio"], sums["max_behavior_ratio"]], self.ctx
        )
        rewards = torch.tensor([s.reward for s in samples], dtype=torch.float64)
        adv = torch.cat([s.advantages[1:][torch.tensor(s.loss_mask[1:]).bool()] for s in samples])
        out = {
            **terms,
            "kl": reduced["kl"] / n_loss,
            "entropy": reduced["entropy"] / n_loss,
            "clip_frac": reduced["clipped"] / n_loss,
            "ratio/mean": reduced["ratio"] / n_loss,
            "ratio/max": max_ratio,
            "behavior_ratio/mean": reduced["behavior_ratio"] / n_loss,
            "behavior_ratio/max": max_behav,
            "behavior_ratio/truncated_frac": reduced["behavior_truncated"] / n_loss,
            "reward/mean": float(rewards.mean()),
            "reward/std": float(rewards.std()) if len(samples) > 1 else 0.0,
            "advantage/mean": float(adv.mean()) if adv.numel() else 0.0,
            "advantage/abs_mean": float(adv.abs().mean()) if adv.numel() else 0.0,
            "num_sequences": float(len(samples)),
            "num_tokens": tokens,
            "num_loss_tokens": n_loss,
            "step_time_s": elapsed,
            "tokens_per_s": tokens / max(elapsed, 1e-9),
            "lr": float(self.scheduler.get_last_lr()[0]),
        }
        out.update(staleness_histogram([s.staleness for s in samples]))
        return out
