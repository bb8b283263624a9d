"""exact_match: normalised exact match against the gold answer and its aliases, with
token F1 in the details (search / QA tasks)."""

from __future__ import annotations

from typing import Literal

from services.common.wire import ScoreItem
from services.reward.gold import TaskLookup, gold_answers
from services.reward.verifiers.base import Verdict, Verifier, VerifierError
from services.reward.verifiers.extract import answer_text
from services.reward.verifiers.text import best_match


class ExactMatchVerifier(Verifier):
    name = "exact_match"
    description = (
        "SQuAD-normalised exact match of the final answer against the gold answer and its "
        "aliases; token F1 in details. Reward is EM (0/1) or F1 per settings."
    )

    def __init__(self, lookup: TaskLookup, reward: Literal["em", "f1"] = "em") -> None:
        self.lookup = lookup
        self.reward = reward

    def score(self, item: ScoreItem) -> Verdict:
        task = self.lookup(item.env, item.task_set, item.task_id)
        golds = gold_answers(task)
        if not golds:
            raise VerifierError(f"task {item.task_id} has no gold answer")
        prediction = answer_text(item)
        if prediction is None:
            return Verdict(0.0, {"em": 0.0, "f1": 0.0, "answered": False})
        em, f1, best = best_match(prediction, golds)
        details = {"em": float(em), "f1": f1, "answered": True, "best_gold": best}
        return Verdict(float(em) if self.reward == "em" else f1, details)
