"""A seeded synthetic shop database: customers, products, orders and order items.

Different seeds give different contents over the same schema, so tests and tasks can use
databases no model has memorized.
"""

from __future__ import annotations

import random
import sqlite3

VERSION = "1"

SCHEMA = """
CREATE TABLE customers (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL,
  country TEXT NOT NULL, signup_year INTEGER NOT NULL
);
CREATE TABLE products (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL, price REAL NOT NULL
);
CREATE TABLE orders (
  id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
  order_date TEXT NOT NULL, status TEXT NOT NULL
);
CREATE TABLE order_items (
  order_id INTEGER NOT NULL REFERENCES orders(id),
  product_id INTEGER NOT NULL REFERENCES products(id),
  quantity INTEGER NOT NULL,
  PRIMARY KEY (order_id, product_id)
);
"""

FIRST = [
    "Ada",
    "Bruno",
    "Chen",
    "Dalia",
    "Emil",
    "Farah",
    "Goran",
    "Hana",
    "Ivan",
    "Jia",
    "Kofi",
    "Lena",
    "Mateo",
    "Nora",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sami",
    "Tala",
]
LAST = [
    "Abbott",
    "Berg",
    "Costa",
    "Dumont",
    "Eze",
    "Fischer",
    "Garcia",
    "Holm",
    "Ito",
    "Jensen",
    "Kaur",
    "Lopez",
    "Moreau",
    "Novak",
    "Okafor",
    "Petrov",
    "Rossi",
    "Silva",
]
PLACES = [
    ("Lisbon", "Portugal"),
    ("Porto", "Portugal"),
    ("Lyon", "France"),
    ("Paris", "France"),
    ("Osaka", "Japan"),
    ("Tokyo", "Japan"),
    ("Accra", "Ghana"),
    ("Lagos", "Nigeria"),
    ("Quito", "Ecuador"),
    ("Oslo", "Norway"),
    ("Bergen", "Norway"),
    ("Hanoi", "Vietnam"),
]
CATEGORIES = {
    "garden": ["Rake", "Hose", "Shovel", "Planter", "Seed Kit"],
    "kitchen": ["Kettle", "Skillet", "Whisk", "Teapot", "Knife Set"],
    "office": ["Stapler", "Notebook", "Desk Lamp", "Pen Pack", "Monitor Stand"],
    "outdoor": ["Tent", "Lantern", "Backpack", "Sleeping Bag", "Compass"],
    "toys": ["Puzzle", "Kite", "Yo-yo", "Board Game", "Robot Kit"],
}
STATUSES = ["pending", "shipped", "delivered", "cancelled"]
ADJECTIVES = ["Classic", "Deluxe", "Mini", "Pro", "Eco"]


def write(conn: sqlite3.Connection, seed: int) -> None:
    """Create the schema and fill it deterministically from `seed`."""
    rng = random.Random(f"synthetic-shop:{seed}")
    conn.executescript(SCHEMA)
    names = rng.sample([f"{f} {last}" for f in FIRST for last in LAST], 60)
    customers = []
    for i, name in enumerate(names, 1):
        city, country = rng.choice(PLACES)
        customers.append((i, name, city, country, rng.randint(2015, 2024)))
    conn.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?)", customers)
    products = []
    for category, items in CATEGORIES.items():
        for item in items:
            name = f"{rng.choice(ADJECTIVES)} {item}"
            products.append((len(products) + 1, name, category, round(rng.uniform(3, 250), 2)))
    conn.executemany("INSERT INTO products VALUES (?, ?, ?, ?)", products)
    orders, items = [], []
    for order_id in range(1, 301):
        month, day = rng.randint(1, 12), rng.randint(1, 28)
        date = f"{rng.choice([2022, 2023, 2024])}-{month:02d}-{day:02d}"
        orders.append((order_id, rng.randint(1, len(customers)), date, rng.choice(STATUSES)))
        for product_id in rng.sample(range(1, len(products) + 1), rng.randint(1, 4)):
            items.append((order_id, product_id, rng.randint(1, 5)))
    conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", orders)
    conn.executemany("INSERT INTO order_items VALUES (?, ?, ?)", items)
