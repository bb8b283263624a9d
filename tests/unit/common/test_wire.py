import pytest
from pydantic import ValidationError

from services.common.wire import (
    GenerateResponse,
    Trajectory,
    TrajectoryStatus,
    TurnSpan,
)


def _traj(**overrides: object) -> Trajectory:
    base: dict[str, object] = {
        "job_id": "j",
        "task_id": "t",
        "group_id": "g",
        "group_size": 2,
        "env": "arithmetic",
        "token_ids": [1, 2, 3, 4, 5],
        "loss_mask": [0, 0, 1, 1, 0],
        "behavior_logprobs": [0.0, 0.0, -0.5, -1.0, 0.0],
        "policy_versions": [0, 0, 3, 4, 0],
        "start_version": 3,
    }
    base.update(overrides)
    return Trajectory.model_validate(base)


def test_oldest_version_counts_only_model_tokens() -> None:
    assert _traj().oldest_version == 3
    assert _traj().num_model_tokens == 2


def test_oldest_version_without_model_tokens_is_admission_version() -> None:
    traj = _traj(loss_mask=[0] * 5)
    assert traj.oldest_version == 3


def test_parallel_arrays_must_match() -> None:
    with pytest.raises(ValidationError, match="loss_mask has 4 entries"):
        _traj(loss_mask=[0, 0, 1, 1])


def test_loss_mask_is_binary() -> None:
    with pytest.raises(ValidationError):
        _traj(loss_mask=[0, 0, 2, 1, 0])


def test_turn_span_must_lie_inside_tokens() -> None:
    with pytest.raises(ValidationError, match="turn span"):
        _traj(turn_spans=[TurnSpan(turn=0, start=2, end=9)])


def test_sample_index_below_group_size() -> None:
    with pytest.raises(ValidationError, match="sample_index"):
        _traj(sample_index=2)


def test_unknown_field_rejected() -> None:
    with pytest.raises(ValidationError, match="rewrd"):
        _traj(rewrd=1.0)


def test_status_roundtrips_as_string() -> None:
    traj = _traj(status="truncated")
    assert traj.status is TrajectoryStatus.TRUNCATED
    assert Trajectory.model_validate_json(traj.model_dump_json()) == traj


def test_generate_response_arrays_must_match() -> None:
    with pytest.raises(ValidationError, match="equal length"):
        GenerateResponse(
            request_id="r",
            token_ids=[1, 2],
            logprobs=[-0.1],
            policy_versions=[0, 0],
            finish_reason="stop",
            prompt_tokens=3,
        )
