"""SQuAD-style answer normalisation, exact match and token F1."""

from __future__ import annotations

import re
import string
from collections import Counter

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower case, drop punctuation and the articles a/an/the, collapse whitespace."""
    text = text.lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> bool:
    return normalize_answer(prediction) == normalize_answer(gold)


def token_f1(prediction: str, gold: str) -> float:
    """Harmonic mean of token precision and recall after normalisation."""
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    common = Counter(pred_tokens) & Counter(gold_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(pred_tokens)
    recall = overlap / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def best_match(prediction: str, golds: list[str]) -> tuple[bool, float, str]:
    """(exact match against any gold, best F1, the gold that gave the best F1)."""
    em = any(exact_match(prediction, g) for g in golds)
    f1, best = max(((token_f1(prediction, g), g) for g in golds), key=lambda p: p[0])
    return em, f1, best
