"""Fixtures for the reward unit tests: gold lookups over real task sets and a task table."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from services.common.wire import Message, ScoreItem
from services.reward.gold import TaskLookup, registry_lookup


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("reward-data")


@pytest.fixture(scope="session")
def env_lookup(data_dir: Path) -> TaskLookup:
    """The production lookup: environments.registry.get_task on real task sets."""
    return registry_lookup(str(data_dir))


@pytest.fixture
def make_item() -> Callable[..., ScoreItem]:
    def make(
        task_type: str,
        task_id: str = "t1",
        *,
        env: str = "test",
        final_answer: str | None = None,
        assistant: str | None = None,
        env_reward: float | None = None,
        task_set: str = "default",
    ) -> ScoreItem:
        messages = [Message(role="user", content="question")]
        if assistant is not None:
            messages.append(Message(role="assistant", content=assistant))
        return ScoreItem(
            env=env,
            task_set=task_set,
            task_id=task_id,
            task_type=task_type,
            final_answer=final_answer,
            messages=messages,
            env_reward=env_reward,
        )

    return make
