"""Seeded question generation over the Wikipedia corpus, with answers checkable by EM/F1.

Single-hop (one page holds the answer):
- `birth_year` / `death_year`: people whose description ends in a life span
  ("Finnish architect and designer (1898–1976)") or "(born 1947)";
- `capital_of` / `capital_is`: pages described as "Capital (city) of X";
- `described_as`: the page whose (unique) description is quoted; the answer is its title.

Multi-hop (two pages):
- `creator_birth_year` / `creator_death_year`: a work described as "... by <Person>"
  where <Person> has a page with a life span;
- `birth_gap`: how many years apart two people of the same occupation were born.

Every question is checked so that its answer string does not occur in it.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from environments.search.corpus import Corpus, Document

_SPAN = re.compile(r"\((?:c\.\s*)?(\d{3,4})\s*[–-]\s*(?:c\.\s*)?(\d{3,4})\)\s*$")
_BORN = re.compile(r"\(born (\d{4})\)\s*$")
_CAPITAL = re.compile(r"^capital(?: city)?(?: and (?:the )?largest city)? of (?:the )?(.+)$", re.I)
_BY = re.compile(r"^(.*?)\s+(?:written |directed |composed |painted )?by ([^,;()]+)$")
_STOP = {"the", "and", "for", "from", "with", "that", "this", "into", "of", "in", "on", "a"}


@dataclass(frozen=True)
class Question:
    kind: str
    hops: int
    question: str
    answer: str
    evidence: tuple[str, ...]
    aliases: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Life:
    doc: Document
    born: int
    died: int | None
    occupation: str  # the description without the life span


def _lives(corpus: Corpus) -> dict[str, Life]:
    out = {}
    for doc in corpus.documents:
        desc = doc.description
        span, born = _SPAN.search(desc), _BORN.search(desc)
        if span and int(span.group(1)) < int(span.group(2)):
            occupation = desc[: span.start()].strip()
            out[doc.doc_id] = Life(doc, int(span.group(1)), int(span.group(2)), occupation)
        elif born:
            out[doc.doc_id] = Life(doc, int(born.group(1)), None, desc[: born.start()].strip())
    return out


def _leaks(answer: str, question: str) -> bool:
    """True when the answer (or any content word of it) appears in the question."""
    q = question.lower()
    if answer.lower() in q:
        return True
    words = [w for w in re.findall(r"\w+", answer.lower()) if len(w) > 3 and w not in _STOP]
    return any(re.search(rf"\b{re.escape(w)}\b", q) for w in words)


def _aliases(title: str) -> tuple[str, ...]:
    base = re.sub(r"\s*\([^)]*\)$", "", title)
    return (base,) if base != title else ()


def _life_questions(lives: dict[str, Life]) -> Iterator[Question]:
    for life in lives.values():
        name = life.doc.title
        yield Question(
            "birth_year", 1, f"In what year was {name} born?", str(life.born), (life.doc.doc_id,)
        )
        if life.died is not None:
            yield Question(
                "death_year", 1, f"In what year did {name} die?", str(life.died), (life.doc.doc_id,)
            )


def _capital_questions(corpus: Corpus) -> Iterator[Question]:
    for doc in corpus.documents:
        m = _CAPITAL.match(doc.description)
        if not m:
            continue
        country = m.group(1).strip().rstrip(".")
        if "," in country or len(country.split()) > 5:
            continue
        yield Question(
            "capital_of",
            1,
            f"{doc.title} is the capital of which country or region?",
            country,
            (doc.doc_id,),
        )
        yield Question(
            "capital_is",
            1,
            f"What is the capital of {country}?",
            doc.title,
            (doc.doc_id,),
            _aliases(doc.title),
        )


def _described_questions(corpus: Corpus) -> Iterator[Question]:
    counts = Counter(d.description.lower() for d in corpus.documents)
    for doc in corpus.documents:
        desc = doc.description
        if counts[desc.lower()] != 1 or len(desc.split()) < 4 or _SPAN.search(desc):
            continue
        yield Question(
            "described_as",
            1,
            f'Which Wikipedia article\'s subject is described as "{desc}"?',
            doc.title,
            (doc.doc_id,),
            _aliases(doc.title),
        )


def _creator_questions(corpus: Corpus, lives: dict[str, Life]) -> Iterator[Question]:
    for doc in corpus.documents:
        m = _BY.match(doc.description)
        if not m:
            continue
        creator = corpus.get(m.group(2).strip())
        life = lives.get(creator.doc_id) if creator else None
        if life is None or creator is None:
            continue
        what = m.group(1).strip().lower()
        surname = creator.title.split()[-1]
        if surname.lower() in doc.title.lower():  # the title names the creator: one hop
            continue
        evidence = (doc.doc_id, creator.doc_id)
        yield Question(
            "creator_birth_year",
            2,
            f"In what year was the creator of '{doc.title}' ({what}) born?",
            str(life.born),
            evidence,
        )
        if life.died is not None:
            yield Question(
                "creator_death_year",
                2,
                f"In what year did the creator of '{doc.title}' ({what}) die?",
                str(life.died),
                evidence,
            )


def _gap_questions(lives: dict[str, Life], rng: random.Random, n: int) -> Iterator[Question]:
    by_job: dict[str, list[Life]] = defaultdict(list)
    for life in lives.values():
        words = life.occupation.split()
        if words:
            by_job[words[-1].lower()].append(life)
    groups = [g for _, g in sorted(by_job.items()) if len(g) >= 2]
    seen: set[tuple[str, str]] = set()
    for _ in range(n * 20):
        if len(seen) >= n or not groups:
            break
        a, b = rng.sample(rng.choice(groups), 2)
        key = tuple(sorted((a.doc.doc_id, b.doc.doc_id)))
        if a.born == b.born or key in seen:
            continue
        seen.add(key)  # type: ignore[arg-type]
        yield Question(
            "birth_gap",
            2,
            f"How many years apart were {a.doc.title} and {b.doc.title} born?",
            str(abs(a.born - b.born)),
            (a.doc.doc_id, b.doc.doc_id),
        )


def _pick(items: list[Question], n: int, rng: random.Random) -> list[Question]:
    items = [q for q in items if not _leaks(q.answer, q.question)]
    return rng.sample(items, min(n, len(items)))


def generate(corpus: Corpus, seed: int, single: int = 1200, multi: int = 400) -> list[Question]:
    """`single` single-hop and `multi` multi-hop questions, deterministic for a seed."""
    rng = random.Random(f"search:{seed}")
    lives = _lives(corpus)
    life_qs = list(_life_questions(lives))
    capital_qs = list(_capital_questions(corpus))
    described_qs = list(_described_questions(corpus))
    singles = _pick(capital_qs, single // 6, rng)
    singles += _pick(life_qs, single // 2, rng)
    singles += _pick(described_qs, single - len(singles), rng)
    creator_qs = _pick(list(_creator_questions(corpus, lives)), multi // 2, rng)
    gap_qs = _pick(list(_gap_questions(lives, rng, multi * 2)), multi - len(creator_qs), rng)
    return singles + creator_qs + gap_qs
