"""Seeded function-synthesis problem families.

Each family draws its parameters from a `random.Random`, and returns a `Problem`: the
signature, a docstring that fully specifies the behaviour, a reference solution (source)
and test inputs. Expected outputs are computed by running the reference on the host (our
own code), at generation time.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Difficulty = str  # "easy" | "medium" | "hard"


@dataclass
class Problem:
    family: str
    entry: str
    signature: str  # "def f(xs: list[int]) -> int:"
    doc: str  # the behaviour, without examples
    reference: str  # full source of a correct solution
    inputs: list[list[Any]]  # argument lists, one per test
    difficulty: Difficulty


def _ints(rng: random.Random, n: int, lo: int = -50, hi: int = 50) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(n)]


def _word(rng: random.Random, lo: int = 2, hi: int = 8, alphabet: str = "abcdefgh") -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


def _lists(rng: random.Random, count: int, **kw: int) -> list[list[Any]]:
    return [[_ints(rng, rng.randint(0, 12), **kw)] for _ in range(count)]


# ------------------------------------------------------------------------- easy


def scale_shift(rng: random.Random, n: int) -> Problem:
    a, b = rng.choice([-3, -2, 2, 3, 4, 5]), rng.randint(-9, 9)
    return Problem(
        "scale_shift", "transform", "def transform(xs: list[int]) -> list[int]:",
        f"Return a new list in which every element x of xs becomes {a} * x + ({b}).",
        f"def transform(xs):\n    return [{a} * x + ({b}) for x in xs]\n",
        _lists(rng, n), "easy",
    )  # fmt: skip


def count_divisible(rng: random.Random, n: int) -> Problem:
    k = rng.randint(2, 9)
    r = rng.randint(0, k - 1)
    return Problem(
        "count_divisible", "count_matching", "def count_matching(xs: list[int]) -> int:",
        f"Return how many elements x of xs have x % {k} == {r} (Python's modulo).",
        f"def count_matching(xs):\n    return sum(1 for x in xs if x % {k} == {r})\n",
        _lists(rng, n), "easy",
    )  # fmt: skip


def digit_power_sum(rng: random.Random, n: int) -> Problem:
    p = rng.randint(1, 4)
    return Problem(
        "digit_power_sum", "digit_power_sum", "def digit_power_sum(n: int) -> int:",
        f"Return the sum of the decimal digits of abs(n), each raised to the power {p}.",
        f"def digit_power_sum(n):\n    return sum(int(d) ** {p} for d in str(abs(n)))\n",
        [[rng.randint(-(10**6), 10**6)] for _ in range(n)], "easy",
    )  # fmt: skip


def clamp_all(rng: random.Random, n: int) -> Problem:
    lo = rng.randint(-20, 0)
    hi = lo + rng.randint(5, 30)
    return Problem(
        "clamp_all", "clamp_all", "def clamp_all(xs: list[int]) -> list[int]:",
        f"Return xs with every value below {lo} replaced by {lo} and every value above "
        f"{hi} replaced by {hi}.",
        f"def clamp_all(xs):\n    return [min(max(x, {lo}), {hi}) for x in xs]\n",
        _lists(rng, n), "easy",
    )  # fmt: skip


def filter_words(rng: random.Random, n: int) -> Problem:
    k, c = rng.randint(3, 6), rng.choice("abcdefgh")
    return Problem(
        "filter_words", "pick_words", "def pick_words(words: list[str]) -> list[str]:",
        f"Return, in their original order, the words that are at least {k} characters long "
        f"and contain the letter '{c}'.",
        f"def pick_words(words):\n    return [w for w in words if len(w) >= {k} and '{c}' in w]\n",
        [[[_word(rng) for _ in range(rng.randint(0, 8))]] for _ in range(n)], "easy",
    )  # fmt: skip


def caesar(rng: random.Random, n: int) -> Problem:
    k = rng.randint(1, 25)
    ref = (
        "def shift_letters(s):\n"
        "    out = []\n"
        "    for ch in s:\n"
        "        if 'a' <= ch <= 'z':\n"
        f"            out.append(chr((ord(ch) - 97 + {k}) % 26 + 97))\n"
        "        elif 'A' <= ch <= 'Z':\n"
        f"            out.append(chr((ord(ch) - 65 + {k}) % 26 + 65))\n"
        "        else:\n"
        "            out.append(ch)\n"
        "    return ''.join(out)\n"
    )
    alphabet = string.ascii_letters + " .,!"
    return Problem(
        "caesar", "shift_letters", "def shift_letters(s: str) -> str:",
        f"Shift every ASCII letter of s forward by {k} places in the alphabet, wrapping "
        "around and keeping its case; leave every other character unchanged.",
        ref, [[_word(rng, 0, 20, alphabet)] for _ in range(n)], "easy",
    )  # fmt: skip


# ----------------------------------------------------------------------- medium


def recurrence(rng: random.Random, n: int) -> Problem:
    a0, a1, p, q = rng.randint(0, 3), rng.randint(1, 4), rng.randint(1, 3), rng.randint(-2, 2)
    ref = (
        "def nth_term(n):\n"
        f"    a, b = {a0}, {a1}\n"
        "    for _ in range(n):\n"
        f"        a, b = b, {p} * b + ({q}) * a\n"
        "    return a\n"
    )
    return Problem(
        "recurrence", "nth_term", "def nth_term(n: int) -> int:",
        f"The sequence a is defined by a(0) = {a0}, a(1) = {a1} and "
        f"a(k) = {p} * a(k-1) + ({q}) * a(k-2) for k >= 2. Return a(n) for n >= 0.",
        ref, [[rng.randint(0, 40)] for _ in range(n)], "medium",
    )  # fmt: skip


def run_length(rng: random.Random, n: int) -> Problem:
    count_first = rng.random() < 0.5
    piece = "str(count) + ch" if count_first else "ch + str(count)"
    ref = (
        "def compress(s):\n"
        "    out, i = [], 0\n"
        "    while i < len(s):\n"
        "        j = i\n"
        "        while j < len(s) and s[j] == s[i]:\n"
        "            j += 1\n"
        "        ch, count = s[i], j - i\n"
        f"        out.append({piece})\n"
        "        i = j\n"
        "    return ''.join(out)\n"
    )
    fmt = "'3a'" if count_first else "'a3'"
    return Problem(
        "run_length", "compress", "def compress(s: str) -> str:",
        "Run-length encode s: every maximal run of one repeated character becomes the run "
        f"length and the character, written like {fmt} for 'aaa' (runs of 1 too).",
        ref, [[_word(rng, 0, 16, "aab")] for _ in range(n)], "medium",
    )  # fmt: skip


def rotate(rng: random.Random, n: int) -> Problem:
    k, left = rng.randint(1, 7), rng.random() < 0.5
    body = f"xs[{k} % len(xs):] + xs[:{k} % len(xs)]" if left else (
        f"xs[-({k} % len(xs)):] + xs[:-({k} % len(xs))] if {k} % len(xs) else list(xs)"
    )  # fmt: skip
    side = "left" if left else "right"
    return Problem(
        "rotate", "rotate", "def rotate(xs: list[int]) -> list[int]:",
        f"Return xs rotated {side} by {k} positions (cyclically; an empty list stays empty).",
        f"def rotate(xs):\n    if not xs:\n        return []\n    return {body}\n",
        _lists(rng, n), "medium",
    )  # fmt: skip


def most_frequent(rng: random.Random, n: int) -> Problem:
    smallest = rng.random() < 0.5
    pick = "min" if smallest else "max"
    return Problem(
        "most_frequent", "mode", "def mode(xs: list[int]) -> int | None:",
        "Return the value occurring most often in xs; among equally frequent values return "
        f"the {'smallest' if smallest else 'largest'}. Return None for an empty list.",
        "def mode(xs):\n    if not xs:\n        return None\n"
        "    best = max(xs.count(x) for x in xs)\n"
        f"    return {pick}(x for x in xs if xs.count(x) == best)\n",
        [[_ints(rng, rng.randint(0, 12), lo=0, hi=5)] for _ in range(n)], "medium",
    )  # fmt: skip


def brackets(rng: random.Random, n: int) -> Problem:
    pairs = rng.sample([("(", ")"), ("[", "]"), ("{", "}"), ("<", ">")], rng.randint(2, 3))
    opens = "".join(o for o, _ in pairs)
    closes = "".join(c for _, c in pairs)
    ref = (
        "def balanced(s):\n"
        f"    pairs = {dict((c, o) for o, c in pairs)!r}\n"
        "    stack = []\n"
        "    for ch in s:\n"
        f"        if ch in {opens!r}:\n"
        "            stack.append(ch)\n"
        "        elif ch in pairs:\n"
        "            if not stack or stack.pop() != pairs[ch]:\n"
        "                return False\n"
        "    return not stack\n"
    )
    alphabet = opens + closes + "x"
    inputs = []
    for _ in range(n):
        if rng.random() < 0.4:
            depth = [rng.choice(pairs) for _ in range(rng.randint(1, 4))]
            inputs.append(["".join(o for o, _ in depth) + "".join(c for _, c in reversed(depth))])
        else:
            inputs.append([_word(rng, 0, 10, alphabet)])
    return Problem(
        "brackets", "balanced", "def balanced(s: str) -> bool:",
        f"Return True when the brackets {' '.join(o + c for o, c in pairs)} in s are "
        "balanced and properly nested; every other character is ignored.",
        ref, inputs, "medium",
    )  # fmt: skip


def second_largest(rng: random.Random, n: int) -> Problem:
    k = rng.randint(2, 3)
    nth = {2: "second", 3: "third"}[k]
    return Problem(
        "kth_largest", "kth_largest_distinct",
        "def kth_largest_distinct(xs: list[int]) -> int | None:",
        f"Return the {nth}-largest distinct value in xs, or None if xs has fewer than {k} "
        "distinct values.",
        "def kth_largest_distinct(xs):\n    values = sorted(set(xs), reverse=True)\n"
        f"    return values[{k - 1}] if len(values) >= {k} else None\n",
        _lists(rng, n, lo=-5, hi=9), "medium",
    )  # fmt: skip


# ------------------------------------------------------------------------- hard


def min_coins(rng: random.Random, n: int) -> Problem:
    coins = sorted({*rng.sample(range(2, 13), 3), rng.choice([1, 3])})
    ref = (
        "def min_coins(amount):\n"
        f"    coins = {coins!r}\n"
        "    best = [0] + [None] * amount\n"
        "    for a in range(1, amount + 1):\n"
        "        options = [best[a - c] for c in coins if c <= a and best[a - c] is not None]\n"
        "        best[a] = min(options) + 1 if options else None\n"
        "    return -1 if best[amount] is None else best[amount]\n"
    )
    return Problem(
        "min_coins", "min_coins", "def min_coins(amount: int) -> int:",
        f"With unlimited coins of values {coins}, return the fewest coins summing exactly "
        "to amount (amount >= 0), or -1 when it cannot be made.",
        ref, [[rng.randint(0, 80)] for _ in range(n)], "hard",
    )  # fmt: skip


def lis(rng: random.Random, n: int) -> Problem:
    strict = rng.random() < 0.5
    cmp = "<" if strict else "<="
    ref = (
        "def longest_run_up(xs):\n"
        "    best = [1] * len(xs)\n"
        "    for i in range(len(xs)):\n"
        "        for j in range(i):\n"
        f"            if xs[j] {cmp} xs[i]:\n"
        "                best[i] = max(best[i], best[j] + 1)\n"
        "    return max(best, default=0)\n"
    )
    kind = "strictly increasing" if strict else "non-decreasing"
    return Problem(
        "lis", "longest_run_up", "def longest_run_up(xs: list[int]) -> int:",
        f"Return the length of the longest {kind} subsequence of xs (not necessarily "
        "contiguous); 0 for an empty list.",
        ref, _lists(rng, n, lo=0, hi=9), "hard",
    )  # fmt: skip


def edit_distance(rng: random.Random, n: int) -> Problem:
    ins, dele, sub = rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 4)
    ref = (
        "def edit_cost(a, b):\n"
        "    prev = [j * " + str(ins) + " for j in range(len(b) + 1)]\n"
        "    for i in range(1, len(a) + 1):\n"
        f"        cur = [i * {dele}] + [0] * len(b)\n"
        "        for j in range(1, len(b) + 1):\n"
        f"            same = prev[j - 1] + (0 if a[i - 1] == b[j - 1] else {sub})\n"
        f"            cur[j] = min(same, prev[j] + {dele}, cur[j - 1] + {ins})\n"
        "        prev = cur\n"
        "    return prev[-1]\n"
    )
    return Problem(
        "edit_distance", "edit_cost", "def edit_cost(a: str, b: str) -> int:",
        f"Return the cheapest cost of turning a into b, where inserting a character costs "
        f"{ins}, deleting one costs {dele} and replacing one by another costs {sub}.",
        ref, [[_word(rng, 0, 7, "abc"), _word(rng, 0, 7, "abc")] for _ in range(n)], "hard",
    )  # fmt: skip


def islands(rng: random.Random, n: int) -> Problem:
    diagonal = rng.random() < 0.5
    steps = "[(1,0),(-1,0),(0,1),(0,-1)" + (",(1,1),(1,-1),(-1,1),(-1,-1)]" if diagonal else "]")
    ref = (
        "def count_islands(grid):\n"
        "    seen, count = set(), 0\n"
        "    for r in range(len(grid)):\n"
        "        for c in range(len(grid[r])):\n"
        "            if grid[r][c] != '#' or (r, c) in seen:\n"
        "                continue\n"
        "            count += 1\n"
        "            todo = [(r, c)]\n"
        "            seen.add((r, c))\n"
        "            while todo:\n"
        "                y, x = todo.pop()\n"
        f"                for dy, dx in {steps}:\n"
        "                    ny, nx = y + dy, x + dx\n"
        "                    if 0 <= ny < len(grid) and 0 <= nx < len(grid[ny]) and "
        "grid[ny][nx] == '#' and (ny, nx) not in seen:\n"
        "                        seen.add((ny, nx))\n"
        "                        todo.append((ny, nx))\n"
        "    return count\n"
    )
    conn = "8 neighbours (diagonals too)" if diagonal else "4 neighbours (no diagonals)"
    grids = []
    for _ in range(n):
        rows, cols = rng.randint(1, 6), rng.randint(1, 6)
        grids.append([["".join(rng.choice("#..") for _ in range(cols)) for _ in range(rows)]])
    return Problem(
        "islands", "count_islands", "def count_islands(grid: list[str]) -> int:",
        f"grid is a list of equal-length rows of '#' (land) and '.' (water). Return the "
        f"number of islands: groups of land cells connected through their {conn}.",
        ref, grids, "hard",
    )  # fmt: skip


def kth_prime(rng: random.Random, n: int) -> Problem:
    k = rng.randint(1, 4)
    ref = (
        "def prime_after(n):\n"
        "    def is_prime(m):\n"
        "        return m >= 2 and all(m % d for d in range(2, int(m ** 0.5) + 1))\n"
        f"    found, m = 0, n\n"
        f"    while found < {k}:\n"
        "        m += 1\n"
        "        if is_prime(m):\n"
        "            found += 1\n"
        "    return m\n"
    )
    return Problem(
        "kth_prime", "prime_after", "def prime_after(n: int) -> int:",
        f"Return the {k}-th smallest prime number strictly greater than n (n may be negative).",
        ref, [[rng.randint(-10, 5000)] for _ in range(n)], "hard",
    )  # fmt: skip


def word_break(rng: random.Random, n: int) -> Problem:
    words = sorted({_word(rng, 1, 3, "abc") for _ in range(rng.randint(3, 5))})
    ref = (
        "def count_splits(s):\n"
        f"    words = {words!r}\n"
        "    ways = [1] + [0] * len(s)\n"
        "    for i in range(1, len(s) + 1):\n"
        "        ways[i] = sum(ways[i - len(w)] for w in words if s[:i].endswith(w))\n"
        "    return ways[len(s)]\n"
    )
    inputs = []
    for _ in range(n):
        if rng.random() < 0.6:
            inputs.append(["".join(rng.choice(words) for _ in range(rng.randint(0, 5)))])
        else:
            inputs.append([_word(rng, 0, 8, "abc")])
    return Problem(
        "word_break", "count_splits", "def count_splits(s: str) -> int:",
        f"Return the number of ways to write s as a concatenation of words from {words} "
        "(words may repeat; the empty string has exactly one way).",
        ref, inputs, "hard",
    )  # fmt: skip


FAMILIES: tuple[Callable[[random.Random, int], Problem], ...] = (
    scale_shift, count_divisible, digit_power_sum, clamp_all, filter_words, caesar,
    recurrence, run_length, rotate, most_frequent, brackets, second_largest,
    min_coins, lis, edit_distance, islands, kth_prime, word_break,
)  # fmt: skip
