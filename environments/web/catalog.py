"""The shop's seeded, generated catalog: products with a category, brand, attributes,
options (colour, size, ...), a price and a rating; and a small search index over them."""

from __future__ import annotations

import math
import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

CATALOG_SIZE = 1200

# category -> (noun phrases, attribute vocabulary, option types, price range)
CATEGORIES: dict[str, tuple[list[str], list[str], dict[str, list[str]], tuple[int, int]]] = {
    "shoes": (
        ["running shoes", "hiking boots", "sneakers", "loafers", "sandals"],
        [
            "waterproof",
            "leather",
            "slip resistant",
            "lightweight",
            "memory foam",
            "wide fit",
            "breathable",
            "non slip",
            "vegan",
        ],
        {
            "color": ["black", "white", "brown", "navy", "grey", "red"],
            "size": ["6", "7", "8", "9", "10", "11", "12"],
        },
        (25, 160),
    ),
    "t-shirts": (
        ["t-shirt", "crew neck tee", "v-neck tee", "graphic tee", "polo shirt"],
        [
            "cotton",
            "organic",
            "slim fit",
            "moisture wicking",
            "quick dry",
            "short sleeve",
            "long sleeve",
            "machine washable",
        ],
        {
            "color": ["black", "white", "blue", "green", "yellow", "pink", "grey"],
            "size": ["xs", "s", "m", "l", "xl", "xxl"],
        },
        (8, 45),
    ),
    "backpacks": (
        ["backpack", "laptop backpack", "hiking daypack", "travel backpack"],
        [
            "water resistant",
            "anti theft",
            "usb charging port",
            "padded laptop sleeve",
            "lightweight",
            "large capacity",
            "ergonomic straps",
        ],
        {
            "color": ["black", "grey", "navy", "olive", "red"],
            "capacity": ["15l", "20l", "25l", "30l", "40l"],
        },
        (19, 120),
    ),
    "headphones": (
        ["wireless headphones", "earbuds", "over-ear headphones", "gaming headset"],
        [
            "noise cancelling",
            "bluetooth",
            "long battery life",
            "foldable",
            "built-in mic",
            "water resistant",
            "fast charging",
        ],
        {"color": ["black", "white", "silver", "blue", "rose gold"]},
        (15, 300),
    ),
    "coffee makers": (
        ["coffee maker", "espresso machine", "pour over set", "french press"],
        [
            "programmable",
            "stainless steel",
            "dishwasher safe",
            "auto shut off",
            "bpa free",
            "compact",
            "thermal carafe",
        ],
        {
            "color": ["black", "silver", "red", "white"],
            "capacity": ["1 cup", "4 cups", "8 cups", "12 cups"],
        },
        (20, 400),
    ),
    "lamps": (
        ["desk lamp", "floor lamp", "bedside lamp", "clip lamp"],
        [
            "dimmable",
            "led",
            "usb port",
            "touch control",
            "adjustable arm",
            "energy saving",
            "eye caring",
        ],
        {"color": ["black", "white", "gold", "wood"], "bulb": ["warm white", "cool white", "rgb"]},
        (12, 150),
    ),
    "jackets": (
        ["rain jacket", "puffer jacket", "fleece jacket", "windbreaker", "softshell jacket"],
        [
            "waterproof",
            "windproof",
            "packable",
            "hooded",
            "insulated",
            "breathable",
            "recycled materials",
        ],
        {
            "color": ["black", "navy", "green", "red", "yellow", "grey"],
            "size": ["s", "m", "l", "xl", "xxl"],
        },
        (30, 250),
    ),
    "watches": (
        ["smart watch", "analog watch", "sports watch", "digital watch"],
        [
            "water resistant",
            "heart rate monitor",
            "gps",
            "stainless steel",
            "sapphire glass",
            "long battery life",
            "sleep tracking",
        ],
        {
            "color": ["black", "silver", "gold", "blue"],
            "band": ["leather", "metal", "silicone", "nylon"],
        },
        (20, 450),
    ),
}

BRANDS = [
    "Acorn",
    "Bravado",
    "Cobalt",
    "Driftwood",
    "Ember",
    "Fjord",
    "Granite",
    "Halcyon",
    "Ironbark",
    "Juniper",
    "Kestrel",
    "Lumen",
    "Meridian",
    "Nimbus",
    "Orchard",
    "Pinnacle",
    "Quill",
    "Riverstone",
    "Summit",
    "Tidal",
    "Umber",
    "Vantage",
    "Willow",
    "Zephyr",
]
AUDIENCES = ["men's", "women's", "unisex", "kids'"]


@dataclass
class Product:
    product_id: str
    title: str
    category: str
    noun: str
    brand: str
    attributes: list[str]
    options: dict[str, list[str]]
    price: float
    rating: float
    reviews: int
    description: str = ""

    @property
    def text(self) -> str:
        return " ".join([self.title, self.category, self.brand, *self.attributes])


def _make_product(rng: random.Random, index: int) -> Product:
    category = rng.choice(sorted(CATEGORIES))
    nouns, attrs, option_types, (lo, hi) = CATEGORIES[category]
    noun = rng.choice(nouns)
    brand = rng.choice(BRANDS)
    attributes = sorted(rng.sample(attrs, rng.randint(2, 4)))
    options = {
        name: sorted(rng.sample(values, rng.randint(2, len(values))), key=values.index)
        for name, values in option_types.items()
    }
    audience = rng.choice(AUDIENCES) + " " if category in ("shoes", "t-shirts", "jackets") else ""
    lead = rng.choice(attributes)
    title = f"{brand} {audience}{lead} {noun}".replace("  ", " ")
    price = round(math.exp(rng.uniform(math.log(lo), math.log(hi))), 0) - 0.01
    description = (
        f"The {brand} {noun} is {', '.join(attributes[:-1])} and {attributes[-1]}. "
        f"Available in {len(next(iter(options.values())))} "
        f"{next(iter(options))}s."
    )
    return Product(
        product_id=f"B{index:05d}",
        title=title,
        category=category,
        noun=noun,
        brand=brand,
        attributes=attributes,
        options=options,
        price=price,
        rating=round(rng.uniform(2.5, 5.0), 1),
        reviews=rng.randint(0, 2500),
        description=description,
    )


_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


@dataclass
class Catalog:
    """Products by id, by category, and a BM25 index over their text."""

    products: list[Product]
    by_id: dict[str, Product] = field(init=False)
    by_category: dict[str, list[Product]] = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {p.product_id: p for p in self.products}
        self.by_category = defaultdict(list)
        for p in self.products:
            self.by_category[p.category].append(p)
        self._docs = [Counter(tokens(p.text)) for p in self.products]
        self._avg_len = sum(sum(d.values()) for d in self._docs) / max(1, len(self._docs))
        df: Counter[str] = Counter()
        for doc in self._docs:
            df.update(doc.keys())
        n = len(self._docs)
        self._idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self._postings: dict[str, list[int]] = defaultdict(list)
        for i, doc in enumerate(self._docs):
            for t in doc:
                self._postings[t].append(i)

    def search(self, query: str, k1: float = 1.2, b: float = 0.75) -> list[Product]:
        """Products matching any query term, best BM25 score first (ties: by id)."""
        scores: dict[int, float] = defaultdict(float)
        for term in set(tokens(query)):
            idf = self._idf.get(term)
            if idf is None:
                continue
            for i in self._postings[term]:
                tf = self._docs[i][term]
                length = sum(self._docs[i].values())
                scores[i] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / self._avg_len))
        ranked = sorted(scores, key=lambda i: (-scores[i], self.products[i].product_id))
        return [self.products[i] for i in ranked]


def generate_catalog(seed: int = 0, size: int = CATALOG_SIZE) -> Catalog:
    rng = random.Random(f"shop:{seed}")
    return Catalog([_make_product(rng, i) for i in range(size)])
