"""Seeded arithmetic task generator: short problems a tiny model can learn quickly.

Levels (difficulty): 1 one-digit addition, 2 two-digit addition/subtraction,
3 one-digit multiplication, 4 two-step expressions. The `default` set has every level;
`easy` has levels 1-2 only.
"""

from __future__ import annotations

import random

from environments.tasks import Task, TaskSet, split_for

LEVELS = (1, 2, 3, 4)
PER_LEVEL = 500
EVAL_FRACTION = 0.1


def _level1(rng: random.Random) -> tuple[str, int]:
    a, b = rng.randint(0, 9), rng.randint(0, 9)
    return f"{a} + {b}", a + b


def _level2(rng: random.Random) -> tuple[str, int]:
    a, b = rng.randint(10, 99), rng.randint(10, 99)
    if rng.random() < 0.5:
        return f"{a} + {b}", a + b
    a, b = max(a, b), min(a, b)
    return f"{a} - {b}", a - b


def _level3(rng: random.Random) -> tuple[str, int]:
    a, b = rng.randint(2, 9), rng.randint(2, 9)
    return f"{a} * {b}", a * b


def _level4(rng: random.Random) -> tuple[str, int]:
    a, b, c = rng.randint(2, 20), rng.randint(2, 9), rng.randint(1, 30)
    if rng.random() < 0.5:
        return f"{a} * {b} + {c}", a * b + c
    return f"({a} + {c}) * {b}", (a + c) * b


_GENERATORS = {1: _level1, 2: _level2, 3: _level3, 4: _level4}
_DIFFICULTY = {1: "easy", 2: "easy", 3: "medium", 4: "hard"}


def generate(name: str, seed: int, version: str) -> TaskSet:
    levels = (1, 2) if name == "easy" else LEVELS
    rng = random.Random(f"arithmetic:{seed}")
    tasks: list[Task] = []
    for level in levels:
        seen: set[str] = set()
        for _ in range(PER_LEVEL * 20):
            if len(seen) >= PER_LEVEL:
                break
            expression, value = _GENERATORS[level](rng)
            if expression in seen:
                continue
            seen.add(expression)
            task_id = f"arith-l{level}-{len(seen) - 1:04d}"
            tasks.append(
                Task(
                    task_id=task_id,
                    task_type="arithmetic",
                    prompt=f"What is {expression}?",
                    split=split_for(task_id, EVAL_FRACTION, salt=f"arith{seed}"),
                    difficulty=_DIFFICULTY[level],
                    answer=str(value),
                    metadata={"level": level},
                )
            )
    return TaskSet("arithmetic", name, version, seed, tasks)
