"""SQuAD-style answer normalization, exact match and token F1 (the env's own reward; the
reward service applies its own verifier)."""

from __future__ import annotations

import re
import string
from collections import Counter

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize(text: str) -> str:
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, answers: list[str]) -> float:
    pred = normalize(prediction)
    return float(any(pred == normalize(a) for a in answers))


def f1(prediction: str, answers: list[str]) -> float:
    best = 0.0
    pred_tokens = normalize(prediction).split()
    for answer in answers:
        gold_tokens = normalize(answer).split()
        common = Counter(pred_tokens) & Counter(gold_tokens)
        overlap = sum(common.values())
        if overlap == 0:
            continue
        precision, recall = overlap / len(pred_tokens), overlap / len(gold_tokens)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best
