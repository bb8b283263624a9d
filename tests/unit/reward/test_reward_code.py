"""code verifier: hidden tests run by a real Python child process; env_reward modes."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from reward_helpers import subprocess_runner, table_lookup

from environments.tasks import Task
from services.common.wire import ScoreItem
from services.reward.verifiers.base import VerifierError
from services.reward.verifiers.code import CodeVerifier, extract_program

TESTS = [
    "assert add(1, 2) == 3",
    "assert add(-1, 1) == 0",
    "assert add(10, 5) == 15",
    "assert add('a', 'b') == 'ab'",
]
TASKS = [
    Task(task_id="add", task_type="code", prompt="Write add(a, b).", gold={"tests": TESTS}),
    Task(task_id="no-tests", task_type="code", prompt="?", gold={}),
]


@pytest.fixture
def verifier() -> CodeVerifier:
    return CodeVerifier(table_lookup(TASKS), subprocess_runner, mode="tests", run_timeout_s=5)


def test_correct_program_passes_all(
    verifier: CodeVerifier, make_item: Callable[..., ScoreItem]
) -> None:
    program = "```python\ndef add(a, b):\n    print('noise' * 10000)\n    return a + b\n```"
    verdict = verifier.score(make_item("code", "add", final_answer=program))
    assert verdict.reward == 1.0 and verdict.details["passed"] == 4


def test_partial_credit_is_fraction_passed(
    verifier: CodeVerifier, make_item: Callable[..., ScoreItem]
) -> None:
    program = "def add(a, b):\n    return int(a) + int(b) if a != 10 else 0"
    verdict = verifier.score(make_item("code", "add", final_answer=program))
    assert verdict.reward == pytest.approx(2 / 4)


def test_crashing_hanging_and_exiting_programs_score_zero(
    verifier: CodeVerifier, make_item: Callable[..., ScoreItem]
) -> None:
    broken = verifier.score(make_item("code", "add", final_answer="def add(a, b) return"))
    assert broken.reward == 0.0 and "SyntaxError" in broken.details["load_error"]
    quits = verifier.score(make_item("code", "add", final_answer="import os\nos._exit(0)"))
    assert quits.reward == 0.0 and quits.details["run_error"] == "exit 0"
    slow = CodeVerifier(table_lookup(TASKS), subprocess_runner, mode="tests", run_timeout_s=0.5)
    hangs = slow.score(make_item("code", "add", final_answer="while True:\n    pass"))
    assert hangs.reward == 0.0 and hangs.details["run_error"] == "timeout"


def test_program_from_transcript(make_item: Callable[..., ScoreItem]) -> None:
    item = make_item("code", assistant="Sure:\n```python\ndef add(a, b):\n    return a + b\n```")
    assert extract_program(item) == "def add(a, b):\n    return a + b\n"
    assert extract_program(make_item("code", assistant="no code")) is None


def test_env_reward_modes(make_item: Callable[..., ScoreItem]) -> None:
    lookup = table_lookup(TASKS)
    item = make_item("code", "add", final_answer="def add(a, b): return 0", env_reward=0.75)
    auto = CodeVerifier(lookup, subprocess_runner, mode="auto").score(item)
    assert auto.reward == 0.75 and auto.details["source"] == "env_reward"
    rerun = CodeVerifier(lookup, subprocess_runner, mode="tests").score(item)
    assert rerun.details["source"] == "tests" and rerun.reward == 0.25  # add(-1, 1) == 0
    no_env = make_item("code", "add", final_answer="def add(a, b): return a + b")
    assert CodeVerifier(lookup, subprocess_runner, mode="auto").score(no_env).reward == 1.0
    with pytest.raises(VerifierError, match="no env_reward"):
        CodeVerifier(lookup, subprocess_runner, mode="env_reward").score(no_env)


def test_task_without_tests_is_a_failure(
    verifier: CodeVerifier, make_item: Callable[..., ScoreItem]
) -> None:
    with pytest.raises(VerifierError, match="no hidden tests"):
        verifier.score(make_item("code", "no-tests", final_answer="x = 1"))
