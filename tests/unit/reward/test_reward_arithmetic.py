"""arithmetic verifier, on the real arithmetic task set's gold answers."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import pytest
from reward_helpers import table_lookup

from environments.registry import get_task_set
from environments.tasks import Task
from services.common.wire import ScoreItem
from services.reward.gold import GoldUnavailable, TaskLookup
from services.reward.verifiers.arithmetic import ArithmeticVerifier, extract_value
from services.reward.verifiers.base import VerifierError


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("42", Fraction(42)),
        ("42.0", Fraction(42)),
        ("The answer is 42.", Fraction(42)),
        ("6 * 7 = 42", Fraction(42)),
        ("1,234", Fraction(1234)),
        ("answer: -3.5, since 2 - 5.5 = -3.5", Fraction(-7, 2)),
        ("\\boxed{3/4}", Fraction(3, 4)),
        ("The answer is 12, not 13", Fraction(12)),
        ("no digits here", None),
    ],
)
def test_extract_value(text: str, value: Fraction | None) -> None:
    assert extract_value(text) == value


@pytest.fixture(scope="module")
def real_tasks(data_dir) -> list[Task]:  # type: ignore[no-untyped-def]
    tasks = get_task_set("arithmetic", "default", data_dir=data_dir).tasks
    return [tasks[0], tasks[len(tasks) // 2], tasks[-1]]


def test_real_gold_answers_in_many_formats(
    real_tasks: list[Task], env_lookup: TaskLookup, make_item: Callable[..., ScoreItem]
) -> None:
    verifier = ArithmeticVerifier(env_lookup)
    for task in real_tasks:
        gold = int(task.answer or "")
        for text in (str(gold), f"{gold}.0", f"The answer is {gold}", f"{task.prompt} = {gold}"):
            item = make_item("arithmetic", task.task_id, env="arithmetic", final_answer=text)
            verdict = verifier.score(item)
            assert verdict.reward == 1.0, (text, task.answer, verdict.details)
        wrong = make_item("arithmetic", task.task_id, env="arithmetic", final_answer=str(gold + 1))
        assert verifier.score(wrong).reward == 0.0


def test_answer_found_in_last_assistant_message(
    real_tasks: list[Task], env_lookup: TaskLookup, make_item: Callable[..., ScoreItem]
) -> None:
    task = real_tasks[0]
    item = make_item(
        "arithmetic", task.task_id, env="arithmetic", assistant=f"Final answer: {task.answer}"
    )
    assert ArithmeticVerifier(env_lookup).score(item).reward == 1.0


def test_no_answer_is_a_real_zero(
    env_lookup: TaskLookup, real_tasks: list[Task], make_item: Callable[..., ScoreItem]
) -> None:
    item = make_item("arithmetic", real_tasks[0].task_id, env="arithmetic", assistant="hmm")
    verdict = ArithmeticVerifier(env_lookup).score(item)
    assert verdict.reward == 0.0 and verdict.details["answered"] is False


def test_unknown_task_and_bad_gold_are_failures(
    env_lookup: TaskLookup, make_item: Callable[..., ScoreItem]
) -> None:
    with pytest.raises(GoldUnavailable):
        ArithmeticVerifier(env_lookup).score(
            make_item("arithmetic", "no-such-task", env="arithmetic", final_answer="1")
        )
    lookup = table_lookup([Task(task_id="t1", task_type="arithmetic", prompt="?", answer="n/a")])
    with pytest.raises(VerifierError, match="not a number"):
        ArithmeticVerifier(lookup).score(make_item("arithmetic", final_answer="1"))
