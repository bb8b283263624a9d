"""exact_match on the search environment's real questions, looked up by the production
lookup (environments.registry.get_task), cross-checked against the env's own grading."""

from __future__ import annotations

import pytest

from environments.registry import get_task_set
from environments.tasks import Task
from services.common.wire import ScoreItem
from services.reward.gold import TaskLookup
from services.reward.verifiers.exact_match import ExactMatchVerifier

scoring = pytest.importorskip("environments.search.scoring")


@pytest.fixture(scope="module")
def tasks(data_dir) -> list[Task]:  # type: ignore[no-untyped-def]
    try:
        task_set = get_task_set("search", "default", data_dir=data_dir)
    except Exception as exc:  # the Wikipedia package is not installed here
        pytest.skip(f"search task set unavailable: {exc}")
    with_alias = next(t for t in task_set.tasks if t.aliases)
    return [task_set.tasks[0], task_set.tasks[-1], with_alias]


def _item(task: Task, answer: str) -> ScoreItem:
    return ScoreItem(
        env="search", task_id=task.task_id, task_type="exact_match", final_answer=answer
    )


def test_real_gold_answers(tasks: list[Task], env_lookup: TaskLookup) -> None:
    em = ExactMatchVerifier(env_lookup)
    for task in tasks:
        gold = task.answer or ""
        for answer in (gold, f"The {gold.upper()}.", *task.aliases):
            verdict = em.score(_item(task, answer))
            assert verdict.reward == 1.0, (answer, task.answers)
        assert em.score(_item(task, "Atlantis")).reward == 0.0


@pytest.mark.parametrize("suffix", ["", " of course", "!"])
def test_agrees_with_the_environments_own_grading(
    tasks: list[Task], env_lookup: TaskLookup, suffix: str
) -> None:
    em = ExactMatchVerifier(env_lookup, reward="em")
    f1 = ExactMatchVerifier(env_lookup, reward="f1")
    for task in tasks:
        answer = (task.answer or "") + suffix
        assert em.score(_item(task, answer)).reward == scoring.exact_match(answer, task.answers)
        assert f1.score(_item(task, answer)).reward == pytest.approx(
            scoring.f1(answer, task.answers)
        )
