"""The code environment's task sets: seeded function-synthesis problems.

Each task shows a signature and a docstring (with two worked examples); the hidden tests
(inputs and expected outputs) are verifier-only gold. `gold["tests"]` also carries them as
`assert` lines, the format the reward service's `code` verifier re-runs.
"""

from __future__ import annotations

import random
from typing import Any

from environments.code.grading import encode
from environments.code.problems import FAMILIES, Problem
from environments.tasks import Task, TaskSet, split_for

TESTS_PER_TASK = 10
VISIBLE_EXAMPLES = 2
EVAL_FRACTION = 0.2
SIZES = {"default": 252, "small": 36}

INSTRUCTIONS = (
    "Implement the function below in Python 3 (standard library only).\n"
    "You may call run_python(code) to run code and see its output. When you are done, "
    "call submit(code) with the complete source defining the function; hidden unit tests "
    "decide the reward (the fraction of tests passed)."
)


def _reference_outputs(problem: Problem) -> list[Any]:
    namespace: dict[str, Any] = {}
    exec(problem.reference, namespace)  # our own generated reference, not user input
    fn = namespace[problem.entry]
    return [fn(*[_copy(a) for a in args]) for args in problem.inputs]


def _copy(value: Any) -> Any:
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _call_text(entry: str, args: list[Any]) -> str:
    return f"{entry}({', '.join(repr(a) for a in args)})"


def render_prompt(problem: Problem, outputs: list[Any]) -> str:
    examples = "\n".join(
        f"    >>> {_call_text(problem.entry, args)}\n    {out!r}"
        for args, out in list(zip(problem.inputs, outputs, strict=True))[:VISIBLE_EXAMPLES]
    )
    stub = f'{problem.signature}\n    """{problem.doc}\n\n{examples}\n    """\n'
    return f"{INSTRUCTIONS}\n\n```python\n{stub}```"


def make_task(index: int, problem: Problem, salt: str) -> Task:
    outputs = _reference_outputs(problem)
    task_id = f"code-{problem.family}-{index:04d}"
    tests = [
        f"assert {_call_text(problem.entry, args)} == {out!r}"
        for args, out in zip(problem.inputs, outputs, strict=True)
    ]
    return Task(
        task_id=task_id,
        task_type="code",
        prompt=render_prompt(problem, outputs),
        split=split_for(task_id, EVAL_FRACTION, salt),
        difficulty=problem.difficulty,
        gold={
            "tests": tests,
            "cases": problem.inputs,
            "expected": [encode(o) for o in outputs],
            "entry_point": problem.entry,
            "reference": problem.reference,
        },
        metadata={
            "entry_point": problem.entry,
            "signature": problem.signature,
            "family": problem.family,
        },
    )


def generate(name: str, seed: int, version: str) -> TaskSet:
    """`SIZES[name]` problems, cycling through the families, each with fresh parameters."""
    rng = random.Random(f"code:{name}:{seed}")
    tasks = []
    for index in range(SIZES[name]):
        family = FAMILIES[index % len(FAMILIES)]
        tasks.append(make_task(index, family(rng, TESTS_PER_TASK), f"code:{seed}"))
    return TaskSet("code", name, version, seed, tasks)
