"""The search environment on the real corpus: corpus, index, questions, tools."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from environments.base import EnvContext
from environments.search.corpus import load_corpus
from environments.search.env import SearchEnvironment, SearchShared
from environments.search.index import BM25Index
from environments.search.scoring import exact_match, f1
from environments.tasks import TaskSet
from services.common.wire import ToolCall


@pytest.fixture(scope="module")
def shared() -> SearchShared:
    corpus = load_corpus()
    return SearchShared(corpus, BM25Index(corpus))


@pytest.fixture(scope="module")
def tasks(env_ctx: EnvContext) -> TaskSet:
    return SearchEnvironment.load_task_set("default", env_ctx)


def test_corpus_is_the_english_wikipedia_extracts(shared: SearchShared) -> None:
    corpus = shared.corpus
    assert len(corpus) == 10033
    doc = corpus.get("Alvar_Aalto")
    assert doc is not None and doc.title == "Alvar Aalto"
    assert corpus.get("alvar aalto") is doc
    assert "Finnish" in doc.page()


def test_bm25_ranks_the_right_page_first(shared: SearchShared) -> None:
    hits = shared.retriever.search("capital city of Ghana on the Gulf of Guinea", 5)
    assert "Accra" in [h.doc.title for h in hits]
    assert hits == sorted(hits, key=lambda h: -h.score)
    assert shared.retriever.search("zzqx qqzv", 5) == []


def test_question_counts_kinds_and_no_answer_leak(tasks: TaskSet) -> None:
    hops = Counter(t.metadata["hops"] for t in tasks.tasks)
    assert hops[1] >= 1000 and hops[2] >= 300
    kinds = Counter(t.metadata["kind"] for t in tasks.tasks)
    assert {"birth_year", "described_as", "capital_of", "creator_birth_year", "birth_gap"} <= set(
        kinds
    )
    for task in tasks.tasks:
        assert task.answer and task.task_type == "exact_match"
        assert task.answer.lower() not in task.prompt.lower(), task
        assert task.gold["evidence"]
    assert tasks.sizes()["eval"] > 100


def test_task_set_is_deterministic(tasks: TaskSet, env_ctx: EnvContext) -> None:
    rebuilt = SearchEnvironment.build_task_set("default", 0, env_ctx)
    assert rebuilt.fingerprint() == tasks.fingerprint()
    other = SearchEnvironment.build_task_set("default", 1, env_ctx)
    assert other.fingerprint() != tasks.fingerprint()


def test_answers_are_supported_by_their_evidence(tasks: TaskSet, shared: SearchShared) -> None:
    for task in tasks.tasks[::25]:
        pages = [shared.corpus.get(d) for d in task.gold["evidence"]]
        assert all(pages)
        if task.metadata["kind"] in ("birth_year", "death_year", "creator_birth_year"):
            assert re.search(rf"\b{task.answer}\b", pages[-1].page())  # type: ignore[union-attr]


def test_single_hop_evidence_is_retrievable(tasks: TaskSet, shared: SearchShared) -> None:
    single = [t for t in tasks.tasks if t.metadata["hops"] == 1][::10]
    found = sum(
        t.gold["evidence"][0] in [h.doc.doc_id for h in shared.retriever.search(t.prompt, 10)]
        for t in single
    )
    assert found / len(single) > 0.6


def test_episode_search_open_answer(tasks: TaskSet, shared: SearchShared) -> None:
    task = next(t for t in tasks.tasks if t.metadata["kind"] == "capital_is")
    env = SearchEnvironment(task, shared, EnvContext())
    result = env.step(ToolCall(name="search", arguments={"query": task.prompt, "k": 3}))
    assert result.error is None and result.observation.startswith("1. [")
    page = env.step(ToolCall(name="open", arguments={"doc_id": task.gold["evidence"][0]}))
    assert page.error is None and page.observation.startswith(f"[{task.gold['evidence'][0]}]")
    missing = env.step(ToolCall(name="open", arguments={"doc_id": "No_Such_Page"}))
    assert missing.error is not None and "no page" in missing.observation
    bad = env.step(ToolCall(name="search", arguments={"query": "x", "k": 500}))
    assert bad.error is not None and bad.error.kind == "bad_arguments"
    done = env.step(ToolCall(name="answer", arguments={"answer": f"The {task.answer}."}))
    assert done.done and done.info["final_answer"] == f"The {task.answer}."
    assert done.reward == 1.0 and done.info["f1"] == 1.0


def test_em_and_f1() -> None:
    assert exact_match("the Eiffel Tower!", ["Eiffel Tower"]) == 1.0
    assert exact_match("Tower", ["Eiffel Tower"]) == 0.0
    assert f1("Tower", ["Eiffel Tower"]) == pytest.approx(2 / 3)
    assert f1("", ["x"]) == 0.0
