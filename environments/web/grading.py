"""Rewards of the web tasks.

Buy tasks are graded like WebShop: the purchased item's type match scales the share of
goal attributes, goal options and the price cap it satisfies. Information tasks compare
the answer: numbers numerically, lists by F1 over their items, text exactly (normalized).
"""

from __future__ import annotations

import re
from typing import Any

from environments.web.catalog import Catalog
from environments.web.shop import ShopState


def buy_reward(goal: dict[str, Any], state: ShopState, catalog: Catalog) -> tuple[float, dict]:
    """The best-graded item of the last order (0 when nothing was bought)."""
    if not state.orders:
        return 0.0, {"bought": None}
    best, detail = 0.0, {}
    for item in state.orders[-1].items:
        reward, parts = grade_item(goal, item.product_id, item.options, catalog)
        if reward >= best:
            best, detail = reward, {"bought": item.product_id, **parts}
    return best, detail


def grade_item(
    goal: dict[str, Any], product_id: str, options: dict[str, str], catalog: Catalog
) -> tuple[float, dict[str, float]]:
    p = catalog.by_id[product_id]
    if p.noun == goal["noun"]:
        r_type = 1.0
    elif p.category == goal["category"]:
        r_type = 0.5
    else:
        r_type = 0.0
    attrs: list[str] = goal["attributes"]
    opts: dict[str, str] = goal["options"]
    r_attr = sum(a in p.attributes for a in attrs) / len(attrs) if attrs else 1.0
    r_opt = sum(options.get(k) == v for k, v in opts.items()) / len(opts) if opts else 1.0
    r_price = float(p.price <= goal["price_max"])
    n_attr, n_opt = len(attrs), len(opts)
    score = (n_attr * r_attr + n_opt * r_opt + r_price) / (n_attr + n_opt + 1)
    return r_type * score, {
        "r_type": r_type,
        "r_attr": r_attr,
        "r_option": r_opt,
        "r_price": r_price,
    }


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^a-z0-9.,' ]", " ", text.lower())).strip(" .")


def _number(text: str) -> float | None:
    match = re.search(r"-?\d[\d,]*(?:\.\d+)?", text)
    return float(match.group().replace(",", "")) if match else None


def info_reward(kind: str, gold: str, answer: str) -> float:
    if kind == "number":
        got, want = _number(answer), _number(gold)
        return float(got is not None and want is not None and abs(got - want) < 0.005)
    if kind == "set":
        got = {x for x in (_norm(a) for a in re.split(r",|\band\b|;", answer)) if x}
        want = {_norm(a) for a in gold.split(",")}
        hit = len(got & want)
        if not hit:
            return 0.0
        precision, recall = hit / len(got), hit / len(want)
        return 2 * precision * recall / (precision + recall)
    return float(_norm(answer) == _norm(gold))
