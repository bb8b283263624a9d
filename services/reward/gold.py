"""Gold data lookup: verifiers fetch the task (and its gold answer) themselves from the
environments' task sets by (env, task_set, task_id); the agent never sends gold.

The default lookup is `environments.registry.get_task`. Anything with the same call shape
can replace it (tests, or a deployment that serves task sets from elsewhere).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class GoldTask(Protocol):
    """What verifiers read from a task (the shape of `environments.tasks.Task`)."""

    task_id: str
    task_type: str
    prompt: str
    answer: str | None
    aliases: list[str]
    gold_sql: str | None
    db_id: str | None
    gold: dict[str, Any]


TaskLookup = Callable[[str, str, str], GoldTask]


class GoldUnavailable(Exception):
    """The task (or the task-set machinery) could not be found: the item cannot be scored."""


def gold_answers(task: GoldTask) -> list[str]:
    """The gold answer followed by its aliases."""
    answers = [task.answer] if task.answer is not None else []
    return answers + [a for a in task.aliases if a is not None]


def registry_lookup(data_dir: str | None = None) -> TaskLookup:
    """A lookup through `environments.registry.get_task` (task sets cached in-process,
    built once under `data_dir`)."""

    def lookup(env: str, task_set: str, task_id: str) -> GoldTask:
        try:
            from environments.registry import get_task
        except ImportError as exc:
            raise GoldUnavailable(f"environments.registry is not importable: {exc}") from exc
        try:
            return get_task(env, task_set, task_id, data_dir=data_dir)
        except KeyError as exc:
            raise GoldUnavailable(f"no task {env}/{task_set}/{task_id}: {exc}") from exc

    return lookup
