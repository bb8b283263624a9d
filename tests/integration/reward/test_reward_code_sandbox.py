"""code verifier with the real bubblewrap sandbox of the code environment."""

from __future__ import annotations

import shutil

import pytest

from environments.tasks import Task
from services.common.wire import ScoreItem
from services.reward.scoring import Scorer
from services.reward.settings import RewardSettings
from services.reward.verifiers.base import VerifierRegistry
from services.reward.verifiers.code import CodeVerifier, sandbox_runner

pytest.importorskip("environments.code.sandbox")
pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

TASK = Task(
    task_id="fizz",
    task_type="code",
    prompt="Write fizz(n).",
    gold={
        "tests": [
            "assert fizz(3) == 'Fizz'",
            "assert fizz(5) == 'Buzz'",
            "assert fizz(15) == 'FizzBuzz'",
            "assert fizz(7) == '7'",
        ]
    },
)
GOOD = """def fizz(n):
    return 'Fizz' * (n % 3 == 0) + 'Buzz' * (n % 5 == 0) or str(n)
"""
HALF = "def fizz(n):\n    return 'Fizz' if n % 3 == 0 else str(n)\n"
NETWORK = """import socket
socket.create_connection(("1.1.1.1", 53), timeout=1)
def fizz(n):
    return 'Fizz' * (n % 3 == 0) + 'Buzz' * (n % 5 == 0) or str(n)
"""


def _lookup(env: str, task_set: str, task_id: str) -> Task:
    return TASK


def _item(program: str) -> ScoreItem:
    return ScoreItem(env="code", task_id="fizz", task_type="code", final_answer=program)


async def test_hidden_tests_in_the_sandbox() -> None:
    verifier = CodeVerifier(_lookup, sandbox_runner, mode="tests", run_timeout_s=2)
    scorer = Scorer(RewardSettings(timeouts={"code": 20}), VerifierRegistry([verifier]))
    good, half, offline, hangs = await scorer.score(
        [_item(GOOD), _item(HALF), _item(NETWORK), _item("while True:\n    pass")]
    )
    await scorer.aclose()
    assert good.ok and good.reward == 1.0 and good.details["isolation"].startswith("bwrap")
    assert half.ok and half.reward == 0.5  # fizz(3) and fizz(7)
    assert offline.ok and offline.reward == 0.0 and offline.details["load_error"]  # no network
    assert hangs.ok and hangs.reward == 0.0 and hangs.details["run_error"] == "timeout"
