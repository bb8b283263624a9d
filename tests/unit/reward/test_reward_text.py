"""SQuAD-style normalisation, exact match and token F1."""

from __future__ import annotations

import pytest

from services.reward.verifiers.text import best_match, exact_match, normalize_answer, token_f1


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("  an   Apple, a day ", "apple day"),
        ("Theatre", "theatre"),  # 'the' only as a whole word
        ("U.S.A.", "usa"),
    ],
)
def test_normalize_answer(raw: str, normal: str) -> None:
    assert normalize_answer(raw) == normal


def test_exact_match_ignores_case_articles_and_punctuation() -> None:
    assert exact_match("the Beatles.", "Beatles")
    assert not exact_match("The Rolling Stones", "Beatles")


def test_token_f1_partial_overlap() -> None:
    # pred tokens: barack obama ; gold tokens: barack hussein obama -> P=1, R=2/3
    assert token_f1("Barack Obama", "Barack Hussein Obama") == pytest.approx(0.8)
    assert token_f1("nothing shared", "Paris") == 0.0
    assert token_f1("", "") == 1.0
    assert token_f1("the", "Paris") == 0.0


def test_best_match_takes_max_over_aliases() -> None:
    em, f1, best = best_match("NYC", ["New York City", "NYC"])
    assert em and f1 == 1.0 and best == "NYC"
