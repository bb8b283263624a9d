"""The arithmetic toy: safe calculator, answer checking, task levels."""

from __future__ import annotations

import pytest

from environments.arithmetic.calc import CalcError, evaluate, format_number, parse_number
from environments.arithmetic.env import ArithmeticEnvironment, score
from environments.base import EnvContext
from services.common.wire import ToolCall


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("3 * (4 + 5)", 27),
        ("2^10", 1024),
        ("7 ÷ 2", 3.5),
        ("-3 + 10 // 3", 0),
        ("1,000 + 1", 1001),
        ("12 × 12 =", 144),
        ("2 ** -1", 0.5),
    ],
)
def test_calculator_evaluates_arithmetic(expression: str, value: float) -> None:
    assert evaluate(expression) == value


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('true')",
        "open('/etc/passwd')",
        "(1).__class__",
        "a + 1",
        "9 ** 9 ** 9",
        "1 / 0",
        "[1, 2]",
        "lambda: 1",
        "",
        "1 +",
        "10 ** 400",
    ],
)
def test_calculator_refuses_code_and_runaway_values(expression: str) -> None:
    with pytest.raises(CalcError):
        evaluate(expression)


def test_number_formatting_and_parsing() -> None:
    assert format_number(7.0) == "7" and format_number(0.5) == "0.5"
    assert parse_number(" 42 ") == 42 and parse_number("1,000") == 1000
    assert parse_number("forty") is None
    assert score("42.0", "42") == 1.0 and score("41", "42") == 0.0


def test_task_sets_have_easy_levels(env_ctx: EnvContext) -> None:
    default = ArithmeticEnvironment.load_task_set("default", env_ctx)
    easy = ArithmeticEnvironment.load_task_set("easy", env_ctx)
    assert len(default) > 1000 and len(easy) == 600
    assert {t.difficulty for t in easy.tasks} == {"easy"}
    assert {t.metadata["level"] for t in default.tasks} == {1, 2, 3, 4}
    for task in default.tasks:
        assert task.answer is not None
        expression = task.prompt.removeprefix("What is ").removesuffix("?")
        assert format_number(evaluate(expression)) == task.answer
        assert len(task.prompt) < 40  # short enough for a tiny model


def test_episode_with_calculator_and_answer(env_ctx: EnvContext) -> None:
    tasks = ArithmeticEnvironment.load_task_set("default", env_ctx)
    task = tasks.sample("train", seed=1)
    env = ArithmeticEnvironment(task, None, env_ctx)
    assert env.reset() == task.prompt and "answer" in (env.system_prompt() or "")
    expression = task.prompt.removeprefix("What is ").removesuffix("?")
    calc = env.step(ToolCall(name="calculate", arguments={"expression": expression}))
    assert calc.observation == task.answer
    bad = env.step(ToolCall(name="calculate", arguments={"expression": "import os"}))
    assert bad.error is not None and "cannot calculate" in bad.observation
    done = env.step(ToolCall(name="answer", arguments={"value": float(task.answer or 0)}))
    assert done.done and done.reward == 1.0 and done.info["final_answer"] == task.answer


def test_easy_tasks_are_the_same_tasks_as_in_default(env_ctx: EnvContext) -> None:
    """Task ids are unique across an env's task sets: a session opened by id finds the
    same task whichever set the rollout worker listed it from."""
    default = ArithmeticEnvironment.load_task_set("default", env_ctx)
    easy = ArithmeticEnvironment.load_task_set("easy", env_ctx)
    for task in easy.tasks:
        assert default.get(task.task_id) == task
