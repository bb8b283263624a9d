"""Search environment: corpus load, BM25 index build, query rate and recall, task generation;
optionally the MiniLM dense index (`--dense`: first run embeds the corpus, then cached).

    .venv/bin/python bench/env_search_index.py [--queries 2000] [--dense]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from environments.search.corpus import load_corpus
from environments.search.env import build_tasks
from environments.search.index import BM25Index, Retriever


def recall_at(retriever: Retriever, tasks: list, k: int) -> float:
    single = [t for t in tasks if t.metadata["hops"] == 1]
    hits = sum(
        t.gold["evidence"][0] in {h.doc.doc_id for h in retriever.search(t.prompt, k)}
        for t in single
    )
    return hits / len(single)


def query_rate(retriever: Retriever, queries: list[str], threads: int) -> float:
    started = time.perf_counter()
    if threads == 1:
        for q in queries:
            retriever.search(q, 5)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda q: retriever.search(q, 5), queries))
    return len(queries) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--dense", action="store_true", help="also build the dense index")
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()

    started = time.perf_counter()
    corpus = load_corpus()
    print(f"corpus: {len(corpus)} documents loaded in {time.perf_counter() - started:.2f}s")
    index = BM25Index(corpus)
    print(f"bm25 index build: {index.build_seconds:.2f}s")
    started = time.perf_counter()
    tasks = build_tasks(corpus, seed=0)
    single = sum(t.metadata["hops"] == 1 for t in tasks)
    print(
        f"task generation: {single} single-hop + {len(tasks) - single} multi-hop in "
        f"{time.perf_counter() - started:.2f}s"
    )
    queries = [t.prompt for t in tasks] * (args.queries // len(tasks) + 1)
    queries = queries[: args.queries]
    for threads in (1, 4):
        print(
            f"bm25 queries/s (k=5, {threads} thread(s)): {query_rate(index, queries, threads):.0f}"
        )
    print(
        f"bm25 recall of the evidence page, single-hop questions: "
        f"@1 {recall_at(index, tasks, 1):.2f}  @5 {recall_at(index, tasks, 5):.2f}  "
        f"@10 {recall_at(index, tasks, 10):.2f}"
    )
    if args.dense:
        from environments.search.dense import DenseIndex

        data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="dense-bench-"))
        dense = DenseIndex(corpus, data_dir, hybrid_with=index)
        print(f"dense index (MiniLM-L6, embed or load): {dense.build_seconds:.1f}s")
        sample = queries[:200]
        started = time.perf_counter()
        for q in sample:
            dense.search(q, 5)
        print(f"hybrid queries/s: {len(sample) / (time.perf_counter() - started):.0f}")
        print(f"hybrid recall single-hop @5: {recall_at(dense, tasks, 5):.2f}")


if __name__ == "__main__":
    main()
