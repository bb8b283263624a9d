"""The example job specs for the environments parse and name registered environments."""

from __future__ import annotations

from pathlib import Path

import pytest

from environments.registry import available, get_environment
from services.common.jobspec import load_job_spec

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.mark.parametrize("name", ["search.yaml", "sql.yaml", "arithmetic-easy.yaml"])
def test_example_job_specs(name: str) -> None:
    spec = load_job_spec(EXAMPLES / name)
    for env in spec.environments:
        assert env.name in available()
        assert env.task_set in get_environment(env.name).task_set_names
