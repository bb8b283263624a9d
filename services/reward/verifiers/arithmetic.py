"""arithmetic: the final answer's numeric value must equal the gold value, whatever the
formatting ("42", "42.0", "1,234", "The answer is 42", "\\boxed{3/4}")."""

from __future__ import annotations

import math
import re
from fractions import Fraction

from services.common.wire import ScoreItem
from services.reward.gold import TaskLookup
from services.reward.verifiers.base import Verdict, Verifier, VerifierError
from services.reward.verifiers.extract import answer_text

_NUMBER = r"[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+−]?\.\d+"
_VALUE = re.compile(rf"(?<![\w.])({_NUMBER})(?:\s*/\s*({_NUMBER}))?")
_ANSWER_IS = re.compile(r"answer\s*(?:is|:|=)\s*(.+)", re.I)


def parse_number(text: str) -> Fraction:
    """The exact value of one number literal ("1,234.50", "-3", "1e3", "3/4")."""
    text = text.strip().replace("−", "-").replace(",", "").rstrip(".")
    if "/" in text:
        num, den = text.split("/", 1)
        return parse_number(num) / parse_number(den)
    return Fraction(text)


def extract_value(text: str) -> Fraction | None:
    """The number the text answers with: the first value after the last 'answer is', else
    the last value (number or fraction) in the text."""
    marked = _ANSWER_IS.findall(text)
    values = _VALUE.findall(marked[-1] if marked else text)
    if not values:
        return None
    num, den = values[0] if marked else values[-1]
    return parse_number(num) / parse_number(den) if den else parse_number(num)


def values_equal(a: Fraction, b: Fraction, rel_tol: float) -> bool:
    if a == b:
        return True
    return rel_tol > 0 and math.isclose(float(a), float(b), rel_tol=rel_tol, abs_tol=0.0)


class ArithmeticVerifier(Verifier):
    name = "arithmetic"
    description = (
        "Exact numeric value of the final answer against the gold value; tolerant of "
        "formatting ('42', '42.0', '1,234', 'The answer is 42', fractions)."
    )

    def __init__(self, lookup: TaskLookup, rel_tol: float = 1e-9) -> None:
        self.lookup = lookup
        self.rel_tol = rel_tol

    def score(self, item: ScoreItem) -> Verdict:
        task = self.lookup(item.env, item.task_set, item.task_id)
        if task.answer is None:
            raise VerifierError(f"task {item.task_id} has no gold answer")
        try:
            gold = parse_number(task.answer)
        except (ValueError, ZeroDivisionError) as exc:
            raise VerifierError(f"gold answer {task.answer!r} is not a number") from exc
        text = answer_text(item)
        try:
            value = extract_value(text) if text is not None else None
        except (ValueError, ZeroDivisionError):
            value = None
        details = {"gold": str(gold), "parsed": None if value is None else str(value)}
        if value is None:
            return Verdict(0.0, {**details, "answered": text is not None})
        return Verdict(float(values_equal(value, gold, self.rel_tol)), details)
