"""exact_match verifier: EM against gold + aliases, F1 in details, reward em|f1."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from reward_helpers import table_lookup

from environments.tasks import Task
from services.common.wire import ScoreItem
from services.reward.verifiers.base import VerifierError
from services.reward.verifiers.exact_match import ExactMatchVerifier

TASKS = [
    Task(
        task_id="q1",
        task_type="exact_match",
        prompt="Which city is the Eiffel Tower in?",
        answer="Paris",
        aliases=["Paris, France"],
    ),
    Task(
        task_id="q2",
        task_type="exact_match",
        prompt="Who was the 44th US president?",
        answer="Barack Obama",
        aliases=["Barack Hussein Obama"],
    ),
    Task(task_id="q3", task_type="exact_match", prompt="No gold here"),
]


@pytest.fixture
def lookup():  # type: ignore[no-untyped-def]
    return table_lookup(TASKS)


def test_em_with_normalisation_and_aliases(lookup, make_item: Callable[..., ScoreItem]) -> None:  # type: ignore[no-untyped-def]
    verifier = ExactMatchVerifier(lookup)
    for answer in ("paris", "Paris.", "The Paris", "paris, france"):
        verdict = verifier.score(make_item("exact_match", "q1", final_answer=answer))
        assert verdict.reward == 1.0 and verdict.details["em"] == 1.0
    verdict = verifier.score(make_item("exact_match", "q1", final_answer="Lyon"))
    assert verdict.reward == 0.0 and verdict.details["f1"] == 0.0


def test_f1_reward_mode(lookup, make_item: Callable[..., ScoreItem]) -> None:  # type: ignore[no-untyped-def]
    em = ExactMatchVerifier(lookup, reward="em").score(
        make_item("exact_match", "q2", final_answer="Obama")
    )
    f1 = ExactMatchVerifier(lookup, reward="f1").score(
        make_item("exact_match", "q2", final_answer="Obama")
    )
    assert em.reward == 0.0
    assert f1.reward == pytest.approx(2 * 1 * 0.5 / 1.5)  # best alias: "Barack Obama"
    assert f1.details["best_gold"] == "Barack Obama"


def test_tagged_answer_in_transcript(lookup, make_item: Callable[..., ScoreItem]) -> None:  # type: ignore[no-untyped-def]
    item = make_item("exact_match", "q1", assistant="I looked it up. <answer>Paris</answer>")
    assert ExactMatchVerifier(lookup).score(item).reward == 1.0
    untagged = make_item("exact_match", "q1", assistant="I think it is in France somewhere")
    verdict = ExactMatchVerifier(lookup).score(untagged)
    assert verdict.reward == 0.0 and verdict.details["answered"] is False


def test_task_without_gold_is_a_failure(lookup, make_item: Callable[..., ScoreItem]) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(VerifierError, match="no gold"):
        ExactMatchVerifier(lookup).score(make_item("exact_match", "q3", final_answer="x"))
