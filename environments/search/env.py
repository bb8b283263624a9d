"""The search environment: BM25 search and page reading over Wikipedia lead extracts."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from environments.base import EnvContext, Environment
from environments.search import questions
from environments.search.corpus import Corpus, load_corpus
from environments.search.index import BM25Index, Retriever
from environments.search.scoring import exact_match, f1
from environments.tasks import Task, TaskSet, split_for
from environments.tools import Final, ToolFailure, tool

log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "Answer the question using the Wikipedia search tools. Call search(query) to find "
    "pages, open(doc_id) to read one, and answer(answer) with a short answer (a name, a "
    "year or a number) when you know it."
)
EVAL_FRACTION = 0.15
_DIFFICULTY = {
    "birth_year": "easy",
    "death_year": "easy",
    "capital_of": "easy",
    "capital_is": "easy",
    "described_as": "medium",
}


@dataclass
class SearchShared:
    corpus: Corpus
    retriever: Retriever


def build_tasks(corpus: Corpus, seed: int) -> list[Task]:
    tasks = []
    for i, q in enumerate(questions.generate(corpus, seed)):
        task_id = f"search-{'mh' if q.hops > 1 else 'sh'}-{i:05d}"
        tasks.append(
            Task(
                task_id=task_id,
                task_type="exact_match",
                prompt=q.question,
                split=split_for(task_id, EVAL_FRACTION, salt=f"search{seed}"),
                difficulty=_DIFFICULTY.get(q.kind, "hard"),
                answer=q.answer,
                aliases=list(q.aliases),
                gold={"evidence": list(q.evidence), "kind": q.kind},
                metadata={"hops": q.hops, "kind": q.kind},
            )
        )
    return tasks


class SearchEnvironment(Environment):
    name = "search"
    description = "Question answering with BM25 search over 10,033 Wikipedia lead extracts."
    task_type = "exact_match"
    task_set_version = "1"
    max_turns = 12
    shared: SearchShared

    @classmethod
    def load_shared(cls, ctx: EnvContext) -> SearchShared:
        corpus = load_corpus()
        retriever: Retriever = BM25Index(corpus)
        if ctx.options.get("dense"):
            from environments.search.dense import DenseIndex

            threads = int(ctx.options.get("dense_threads", 1))
            retriever = DenseIndex(corpus, ctx.data_dir, hybrid_with=retriever, threads=threads)
        return SearchShared(corpus, retriever)

    @classmethod
    def task_set_cache_key(cls, ctx: EnvContext) -> str:
        return f"{cls.task_set_version}-{load_corpus().fingerprint}"

    @classmethod
    def build_task_set(cls, name: str, seed: int, ctx: EnvContext) -> TaskSet:
        corpus = load_corpus()
        version = cls.task_set_cache_key(ctx)
        return TaskSet(cls.name, name, version, seed, build_tasks(corpus, seed))

    def system_prompt(self) -> str:
        return SYSTEM_PROMPT

    @tool("Search Wikipedia; returns ranked results with doc ids and snippets.")
    def search(
        self,
        query: Annotated[str, Field(min_length=1, max_length=500, description="Search terms.")],
        k: Annotated[int, Field(ge=1, le=20, description="How many results.")] = 5,
    ) -> str:
        hits = self.shared.retriever.search(query, k)
        if not hits:
            return f"No results for '{query}'. Try other words."
        lines = []
        for rank, hit in enumerate(hits, 1):
            desc = f" ({hit.doc.description})" if hit.doc.description else ""
            lines.append(
                f"{rank}. [{hit.doc.doc_id}] {hit.doc.title}{desc}\n   {hit.doc.snippet()}"
            )
        return "\n".join(lines)

    @tool("Open a page by its doc id (from search results) and return its text.", name="open")
    def open_page(
        self, doc_id: Annotated[str, Field(min_length=1, description="e.g. 'Alvar_Aalto'.")]
    ) -> str:
        doc = self.shared.corpus.get(doc_id)
        if doc is None:
            raise ToolFailure(f"no page '{doc_id}'; use an id from the search results")
        return f"[{doc.doc_id}]\n{doc.page()}"

    @tool("Give the final answer (short: a name, year or number). Ends the episode.", final=True)
    def answer(self, answer: Annotated[str, "The answer."]) -> Final:
        golds = self.task.answers
        info: dict[str, Any] = {"em": exact_match(answer, golds), "f1": f1(answer, golds)}
        return Final(answer=answer.strip(), reward=info["em"], info=info)
