"""Advantage estimators against hand-computed values."""

from __future__ import annotations

import math

import pytest
import torch

from learner.algorithms import advantages as adv
from learner.credit import token_advantages
from services.common.wire import Trajectory, TurnSpan

R = torch.tensor([1.0, 0.0, 0.0, 1.0, 2.0, 4.0])
G = torch.tensor([0, 0, 0, 0, 1, 1])


def close(a: torch.Tensor, b: list[float], tol: float = 1e-5) -> None:
    assert torch.isfinite(a).all()
    assert a.tolist() == pytest.approx(b, abs=tol)


def test_grpo_hand_values() -> None:
    # group 0: mean 0.5, unbiased std sqrt(1/3); group 1: mean 3, std sqrt(2)
    s0, s1 = math.sqrt(1 / 3), math.sqrt(2)
    close(
        adv.grpo_advantages(R, G, eps=0.0),
        [0.5 / s0, -0.5 / s0, -0.5 / s0, 0.5 / s0, -1 / s1, 1 / s1],
    )


def test_dr_grpo_hand_values() -> None:
    close(adv.dr_grpo_advantages(R, G), [0.5, -0.5, -0.5, 0.5, -1.0, 1.0])


def test_rloo_hand_values() -> None:
    # i=0: 1 - (0+0+1)/3 = 2/3 ; i=1: 0 - 2/3 ; group 1: 2 - 4 = -2, 4 - 2 = 2
    close(adv.rloo_advantages(R, G), [2 / 3, -2 / 3, -2 / 3, 2 / 3, -2.0, 2.0])


def test_reinforce_pp_batch_normalised() -> None:
    r = torch.tensor([1.0, 3.0])
    close(adv.reinforce_pp_advantages(r, eps=0.0), [-1.0, 1.0])
    # token weights 3 and 1: mu = 1.5, sigma = sqrt((3*0.25 + 2.25)/4) = sqrt(0.75)
    w = torch.tensor([3.0, 1.0])
    s = math.sqrt(0.75)
    close(adv.reinforce_pp_advantages(r, w, eps=0.0), [-0.5 / s, 1.5 / s])


@pytest.mark.parametrize(
    "fn",
    [
        lambda r, g: adv.grpo_advantages(r, g),
        adv.dr_grpo_advantages,
        adv.rloo_advantages,
        lambda r, g: adv.reinforce_pp_advantages(r),
        lambda r, g: adv.step_group_advantages(r, g),
    ],
)
def test_all_equal_rewards_give_zero_not_nan(fn) -> None:  # type: ignore[no-untyped-def]
    r = torch.full((4,), 0.7)
    close(fn(r, torch.tensor([0, 0, 1, 1])), [0.0] * 4)


def test_singleton_groups_zero() -> None:
    r = torch.tensor([1.0, 5.0])
    g = torch.tensor([0, 1])
    close(adv.grpo_advantages(r, g), [0.0, 0.0])
    close(adv.rloo_advantages(r, g), [0.0, 0.0])


def test_discounted_returns() -> None:
    close(adv.discounted_returns(torch.tensor([1.0, 0.0, 2.0]), 0.5), [1.5, 1.0, 2.0])


def test_gigpo_combines_episode_and_step_terms() -> None:
    step = adv.step_group_advantages(torch.tensor([1.0, 3.0, 5.0]), torch.tensor([0, 0, 1]), 0.0)
    close(step, [-1 / math.sqrt(2), 1 / math.sqrt(2), 0.0])
    close(adv.gigpo_advantages(torch.tensor([1.0, 1.0, -1.0]), step, 0.5),
          [1 - 0.5 / math.sqrt(2), 1 + 0.5 / math.sqrt(2), -1.0])  # fmt: skip


def _traj(group: str, k: int, reward: float, n_turns: int = 1, **kw) -> Trajectory:  # type: ignore[no-untyped-def]
    ids = list(range(2 + 2 * n_turns))
    spans = [TurnSpan(turn=t, start=2 + 2 * t, end=4 + 2 * t) for t in range(n_turns)]
    mask = [0, 0] + [1] * (2 * n_turns)
    return Trajectory(
        job_id="j", task_id="t", group_id=group, group_size=2, sample_index=k, env="e",
        token_ids=ids, loss_mask=mask, behavior_logprobs=[0.0] * len(ids),
        policy_versions=[0] * len(ids), reward=reward, turn_spans=spans, **kw,
    )  # fmt: skip


def test_token_expansion_grpo() -> None:
    trajs = [_traj("a", 0, 1.0), _traj("a", 1, 0.0)]
    out = token_advantages(trajs, "dr_grpo")
    assert out[0].tolist() == [0.5] * 4 and out[1].tolist() == [-0.5] * 4


def test_gigpo_step_groups_from_step_keys() -> None:
    # Both episodes act from state "s0" at turn 0 and from different states at turn 1.
    a = _traj("g", 0, 1.0, n_turns=2, step_keys=["s0", "x"])
    b = _traj("g", 1, 0.0, n_turns=2, step_keys=["s0", "y"])
    out = token_advantages([a, b], "gigpo", gamma=1.0)
    ep = 1 / math.sqrt(0.5)  # ep / 2 = GRPO on (1, 0) = 0.5 / unbiased std sqrt(0.5)
    # step returns (gamma 1): a (1, 1), b (0, 0); turn-0 step group {1, 0} -> +-ep / 2;
    # turn-1 step groups are singletons -> 0
    assert out[0][2:4].tolist() == pytest.approx([ep / 2 + 0.5 / math.sqrt(0.5)] * 2, abs=1e-4)
    assert out[0][4:6].tolist() == pytest.approx([ep / 2] * 2, abs=1e-4)
    assert out[1][4:6].tolist() == pytest.approx([-ep / 2] * 2, abs=1e-4)


def test_turn_rewards_add_turn_term() -> None:
    a = _traj("g", 0, 1.0, n_turns=2, turn_rewards=[1.0, 0.0])
    b = _traj("g", 1, 1.0, n_turns=2, turn_rewards=[0.0, 0.0])
    out = token_advantages([a, b], "grpo", gamma=1.0)
    # equal episode rewards -> episode term 0; turn returns a: (1, 0), b: (0, 0)
    # pooled over the group: mean 0.25, unbiased std 0.5
    assert out[0][2:4].tolist() == pytest.approx([1.5] * 2, abs=1e-4)
    assert out[0][4:6].tolist() == pytest.approx([-0.5] * 2, abs=1e-4)
    assert out[1][2:].tolist() == pytest.approx([-0.5] * 4, abs=1e-4)
