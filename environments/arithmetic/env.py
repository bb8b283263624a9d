"""The arithmetic toy: `calculate(expression)` and `answer(value)`."""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from environments.arithmetic import tasks as arith_tasks
from environments.arithmetic.calc import CalcError, evaluate, format_number, parse_number
from environments.base import EnvContext, Environment
from environments.tasks import TaskSet
from environments.tools import Final, ToolFailure, tool
from services.common.wire import ToolSpec

SYSTEM_PROMPT = (
    "You solve arithmetic problems. You may call calculate(expression) to compute, then "
    "call answer(value) with the final number. Replying with just the number also works."
)
DIRECT_PROMPT = "Answer the arithmetic question with just the final number."


def score(answer: str, gold: str) -> float:
    """1.0 when `answer` is the gold number (e.g. '7', '7.0', ' 7 '), else 0.0."""
    value, target = parse_number(answer), parse_number(gold)
    return float(value is not None and target is not None and abs(value - target) < 1e-9)


class ArithmeticEnvironment(Environment):
    name = "arithmetic"
    description = "Toy arithmetic: a calculator tool and an answer tool (fast learning tests)."
    task_type = "arithmetic"
    task_set_names: ClassVar[tuple[str, ...]] = ("default", "easy")
    task_set_version = "1"
    max_turns = 4

    @classmethod
    def build_task_set(cls, name: str, seed: int, ctx: EnvContext) -> TaskSet:
        return arith_tasks.generate(name, seed, cls.task_set_version)

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")

        tools: bool = Field(
            True,
            description="Offer calculate/answer. False: a single-turn task answered in plain "
            "text with a short prompt (the fastest setting for learning on CPU).",
        )

    def system_prompt(self) -> str:
        return SYSTEM_PROMPT if self.options.tools else DIRECT_PROMPT

    def offered_tools(self) -> list[ToolSpec]:
        return self.tool_specs() if self.options.tools else []

    @tool("Evaluate an arithmetic expression with numbers, + - * / // % ** and parentheses.")
    def calculate(self, expression: Annotated[str, "The expression, e.g. '3 * (4 + 5)'."]) -> str:
        try:
            return format_number(evaluate(expression))
        except CalcError as exc:
            raise ToolFailure(f"cannot calculate: {exc}") from None

    @tool("Give the final answer (a number). Ends the episode.", final=True)
    def answer(self, value: Annotated[str | float, "The final numeric answer."]) -> Final:
        text = format_number(value) if isinstance(value, int | float) else str(value).strip()
        reward = score(text, self.task.answer or "")
        return Final(answer=text, reward=reward)
