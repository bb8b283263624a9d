"""Web task sets.

- `default`: 600 shop tasks over the seeded catalog: 400 WebShop-like purchases ("buy the
  item with these attributes and options under this price", graded) and 200
  information-seeking questions (a price, a review count, the options offered, the
  cheapest matching product's brand); train/eval by a stable hash.
- `miniwob`: a handful of MiniWoB++ tasks (PyPI `miniwob` HTML, file:// URLs) for the
  Chromium backend, each at several seeds.
"""

from __future__ import annotations

import random
from collections import Counter

from environments.tasks import Task, TaskSet, split_for
from environments.web.catalog import Catalog, Product

EVAL_FRACTION = 0.2
N_BUY, N_INFO = 400, 200
MINIWOB_TASKS = ("click-button", "click-link", "enter-text", "focus-text", "click-checkboxes")
MINIWOB_SEEDS = 4

SHOP_INSTRUCTIONS = (
    "You are browsing a web shop at http://shop.localhost/. Use goto, click, type, back and "
    "scroll to act on the page (elements are addressed by their [id]); call finish(answer) "
    "when you are done."
)


def _price_cap(rng: random.Random, price: float) -> float:
    return float(int(price * rng.uniform(1.05, 1.6)) + 1)


def buy_task(index: int, p: Product, rng: random.Random, salt: str) -> Task:
    attrs = sorted(rng.sample(p.attributes, min(len(p.attributes), rng.randint(1, 2))))
    opts = {name: rng.choice(values) for name, values in p.options.items()}
    cap = _price_cap(rng, p.price)
    opt_text = ", ".join(f"{name} {value}" for name, value in opts.items())
    audience = p.title.split(" ")[1] + " " if "'" in p.title.split(" ")[1] else ""
    instruction = (
        f"Buy {audience}{p.noun} that is {' and '.join(attrs)}, with {opt_text}, "
        f"for less than ${cap:.2f}. Place the order, then call finish."
    )
    task_id = f"web-buy-{index:04d}"
    return Task(
        task_id=task_id,
        task_type="web",
        prompt=f"{SHOP_INSTRUCTIONS}\n\nTask: {instruction}",
        split=split_for(task_id, EVAL_FRACTION, salt),
        difficulty="medium" if len(attrs) + len(opts) <= 3 else "hard",
        gold={
            "kind": "buy",
            "target": p.product_id,
            "goal": {
                "category": p.category,
                "noun": p.noun,
                "attributes": attrs,
                "options": opts,
                "price_max": cap,
            },
        },
        metadata={"kind": "buy", "backend": "text", "instruction": instruction},
    )


def _unique_titles(catalog: Catalog) -> list[Product]:
    counts = Counter(p.title for p in catalog.products)
    return [p for p in catalog.products if counts[p.title] == 1]


def _cheapest_question(catalog: Catalog, rng: random.Random) -> tuple[str, str] | None:
    p = rng.choice(catalog.products)
    attr = rng.choice(p.attributes)
    matching = [q for q in catalog.products if q.noun == p.noun and attr in q.attributes]
    matching.sort(key=lambda q: q.price)
    if len(matching) > 1 and matching[0].price == matching[1].price:
        return None
    question = f"Which brand makes the cheapest {p.noun} that is {attr}? Answer with the brand."
    return question, matching[0].brand


def info_task(
    index: int, catalog: Catalog, pool: list[Product], rng: random.Random, salt: str
) -> Task:
    kind = ["price", "reviews", "options", "cheapest"][index % 4]
    p = rng.choice(pool)
    if kind == "price":
        question = f"What is the price of the {p.title}? Answer with the number only."
        answer, compare = f"{p.price:.2f}", "number"
    elif kind == "reviews":
        question = f"How many reviews does the {p.title} have? Answer with the number only."
        answer, compare = str(p.reviews), "number"
    elif kind == "options":
        name = next(iter(p.options))
        question = (
            f"Which {name} options does the {p.title} come in? Answer with a comma-separated list."
        )
        answer, compare = ", ".join(p.options[name]), "set"
    else:
        found = None
        while found is None:
            found = _cheapest_question(catalog, rng)
        (question, answer), compare = found, "text"
    task_id = f"web-info-{index:04d}"
    return Task(
        task_id=task_id,
        task_type="web",
        prompt=f"{SHOP_INSTRUCTIONS}\n\nQuestion: {question}",
        split=split_for(task_id, EVAL_FRACTION, salt),
        difficulty="hard" if kind == "cheapest" else "easy",
        answer=answer,
        gold={"kind": "info", "compare": compare, "question_type": kind},
        metadata={"kind": "info", "backend": "text", "instruction": question},
    )


def generate_shop(name: str, seed: int, version: str, catalog: Catalog) -> TaskSet:
    rng = random.Random(f"web:{name}:{seed}")
    salt = f"web:{seed}"
    tasks = [buy_task(i, rng.choice(catalog.products), rng, salt) for i in range(N_BUY)]
    pool = _unique_titles(catalog)
    tasks += [info_task(i, catalog, pool, rng, salt) for i in range(N_INFO)]
    return TaskSet("web", name, version, seed, tasks)


def generate_miniwob(name: str, seed: int, version: str) -> TaskSet:
    tasks = []
    for task_name in MINIWOB_TASKS:
        for s in range(MINIWOB_SEEDS):
            task_id = f"miniwob-{task_name}-{s}"
            tasks.append(
                Task(
                    task_id=task_id,
                    task_type="web",
                    prompt="(the instruction is read from the page at reset)",
                    split="eval" if s == MINIWOB_SEEDS - 1 else "train",
                    difficulty="easy",
                    gold={"kind": "miniwob"},
                    metadata={
                        "kind": "miniwob",
                        "backend": "browser",
                        "miniwob": task_name,
                        "seed": seed * 1000 + s,
                    },
                )
            )
    return TaskSet("web", name, version, seed, tasks)
