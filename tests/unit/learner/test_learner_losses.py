"""Policy losses and aggregations against hand-computed values on small tensors."""

from __future__ import annotations

import math

import pytest
import torch

from learner.algorithms import AGGREGATIONS, POLICY_LOSSES, LossInputs, Normalizers, losses
from learner.algorithms.aggregation import constant_normalizer, sequence_mean, token_mean
from services.common.jobspec import AlgorithmSpec

L = math.log


def t(rows: list[list[float]]) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float64)


def test_ppo_clip_decoupled_hand_values() -> None:
    # token 0: r = 1.5 > 1.2, A = 1 -> clipped at 1.2; w = prox/behav = 2 (cap 5)
    # token 1: r = 0.5, A = -1 -> clip(0.5) = 0.8 -> min(-0.5, -0.8) = -0.8; w = 1
    # token 2: masked, garbage values must not leak (behav -inf-ish)
    logp = t([[L(0.3), L(0.1), 0.0]]).requires_grad_()
    prox = t([[L(0.2), L(0.2), 0.0]])
    behav = t([[L(0.1), L(0.2), -1e4]])
    adv = t([[1.0, -1.0, 7.0]])
    mask = t([[1.0, 1.0, 0.0]])
    loss, stats = losses.ppo_clip_decoupled_loss(logp, prox, behav, adv, mask, 0.2, 0.2, 5.0)
    assert loss.tolist()[0] == pytest.approx([-2 * 1.2, 0.8, 0.0])
    assert stats["clipped"].tolist()[0][:2] == [1.0, 1.0]
    assert stats["behavior_ratio"].tolist()[0][:2] == pytest.approx([2.0, 1.0])
    loss.sum().backward()
    assert torch.isfinite(logp.grad).all()
    assert logp.grad.tolist()[0] == [0.0, 0.0, 0.0]  # both tokens clipped: no gradient


def test_ppo_unclipped_gradient_and_truncation() -> None:
    # r = 1 (on-policy), A = 2, behaviour ratio exp(3) truncated at cap 2
    logp = t([[L(0.5)]]).requires_grad_()
    loss, stats = losses.ppo_clip_decoupled_loss(
        logp, t([[L(0.5)]]), t([[L(0.5) - 3]]), t([[2.0]]), t([[1.0]]), 0.2, 0.28, 2.0
    )
    assert loss.item() == pytest.approx(-4.0)
    loss.sum().backward()
    assert logp.grad.item() == pytest.approx(-4.0)  # d/dlogp of -w * r * A with r = 1
    assert stats["behavior_truncated"].item() == 1.0


def test_tis_token_hand_values() -> None:
    logp = t([[L(0.4), L(0.1)]]).requires_grad_()
    behav = t([[L(0.2), L(0.5)]])
    loss, stats = losses.tis_token_loss(logp, behav, t([[1.0, 1.0]]), t([[1.0, 1.0]]), 1.5)
    # rho = (min(2, 1.5), 0.2)
    assert loss.tolist()[0] == pytest.approx([-1.5 * L(0.4), -0.2 * L(0.1)])
    assert stats["behavior_truncated"].tolist()[0] == [1.0, 0.0]


def test_tis_sequence_hand_values() -> None:
    logp = t([[L(0.4), L(0.3), 0.0]]).requires_grad_()
    behav = t([[L(0.2), L(0.6), 99.0]])
    mask = t([[1.0, 1.0, 0.0]])
    loss, _ = losses.tis_sequence_loss(logp, behav, t([[2.0, 2.0, 2.0]]), mask, 5.0)
    rho = (0.4 / 0.2) * (0.3 / 0.6)  # = 1, the masked token is ignored
    assert loss.tolist()[0] == pytest.approx([-rho * 2 * L(0.4), -rho * 2 * L(0.3), 0.0])


def test_gspo_sequence_ratio_and_clip() -> None:
    logp = t([[L(0.4), L(0.1)], [L(0.2), L(0.2)]]).requires_grad_()
    prox = t([[L(0.2), L(0.1)], [L(0.2), L(0.2)]])
    behav = prox.clone()
    mask = t([[1.0, 1.0], [1.0, 0.0]])
    adv = t([[1.0, 1.0], [-1.0, -1.0]])
    loss, stats = losses.gspo_loss(logp, prox, behav, adv, mask, 0.1, 0.1, 5.0)
    s0 = math.sqrt(2.0)  # geometric mean of (2, 1)
    assert stats["ratio"][0].tolist() == pytest.approx([s0, s0])
    # sequence 0: clip(1.414) = 1.1, A = 1 -> -1.1 per token; sequence 1: ratio 1 -> +1
    assert loss.flatten().tolist() == pytest.approx([-1.1, -1.1, 1.0, 0.0])


def test_kl_k3_and_entropy() -> None:
    logp = t([[L(0.5), L(0.5)]])
    ref = t([[L(0.25), L(0.5)]])
    kl = losses.kl_k3(logp, ref, t([[1.0, 0.0]]))
    assert kl.tolist()[0] == pytest.approx([0.5 - L(0.5) - 1.0, 0.0])
    logits = torch.zeros(1, 1, 4)
    assert losses.entropy_from_logits(logits).item() == pytest.approx(math.log(4), abs=1e-6)


LOSS = t([[1.0, 2.0, 3.0], [4.0, 0.0, 0.0]])
MASK = t([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])


def test_aggregations_hand_values() -> None:
    assert token_mean(LOSS, MASK).item() == pytest.approx(10 / 4)
    assert sequence_mean(LOSS, MASK).item() == pytest.approx((2 + 4) / 2)
    assert constant_normalizer(LOSS, MASK, max_tokens=5).item() == pytest.approx(10 / (2 * 5))


def test_aggregation_all_masked_is_zero_not_nan() -> None:
    zero = torch.zeros_like(MASK)
    for value in (token_mean(LOSS, zero), sequence_mean(LOSS, zero)):
        assert value.item() == 0.0


def test_accumulation_matches_full_batch() -> None:
    norms = Normalizers(num_tokens=4, num_sequences=2, max_tokens=5)
    for name, fn in AGGREGATIONS.items():
        full = fn(LOSS, MASK, norms)
        parts = fn(LOSS[:1], MASK[:1], norms) + fn(LOSS[1:], MASK[1:], norms)
        assert parts.item() == pytest.approx(full.item()), name


@pytest.mark.parametrize("name", sorted(POLICY_LOSSES))
def test_registry_losses_finite_with_masked_padding(name: str) -> None:
    logp = t([[-1.0, -2.0, 0.0]]).requires_grad_()
    x = LossInputs(logp, t([[-1.1, -2.0, 0.0]]), t([[-1.2, -1.9, -1e9]]), t([[1.0, -1.0, 0.0]]),
                   t([[1.0, 1.0, 0.0]]))  # fmt: skip
    loss, _ = POLICY_LOSSES[name](x, AlgorithmSpec())
    loss.sum().backward()
    assert torch.isfinite(loss).all() and torch.isfinite(logp.grad).all()
    assert loss[0, 2].item() == 0.0


def test_zero_advantage_gives_zero_loss() -> None:
    logp = t([[-1.0, -2.0]]).requires_grad_()
    for name in POLICY_LOSSES:
        x = LossInputs(logp, logp.detach(), logp.detach(), torch.zeros(1, 2, dtype=torch.float64),
                       torch.ones(1, 2, dtype=torch.float64))  # fmt: skip
        loss, _ = POLICY_LOSSES[name](x, AlgorithmSpec())
        assert loss.abs().sum().item() == 0.0, name
