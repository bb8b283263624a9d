"""Reward settings: descriptions everywhere, env overrides, time limits."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from services.reward.settings import RewardSettings


def test_every_field_is_described() -> None:
    missing = [n for n, f in RewardSettings.model_fields.items() if not f.description]
    assert missing == []


def test_timeouts_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLIPSTREAM_REWARD_TIMEOUTS", '{"sql": 3, "format": 0.5}')
    monkeypatch.setenv("SLIPSTREAM_REWARD_DEFAULT_TIMEOUT_S", "7")
    settings = RewardSettings()
    assert settings.timeout_for("sql") == 3.0
    assert settings.timeout_for("format") == 0.5
    assert settings.timeout_for("code") == 60.0  # built-in, not overridden
    assert settings.timeout_for("arithmetic") == 7.0


def test_bad_values_are_refused() -> None:
    with pytest.raises(ValidationError, match="time limits must be > 0"):
        RewardSettings(timeouts={"sql": 0})
    with pytest.raises(ValidationError):
        RewardSettings(exact_match_reward="accuracy")  # type: ignore[arg-type]
