"""Code task set: size, difficulty labels, determinism, reference solutions pass their own
hidden tests; strict result encoding and report parsing."""

from __future__ import annotations

from collections import Counter

import pytest

from environments.code.grading import encode, parse_results
from environments.code.tasks import generate


@pytest.fixture(scope="module")
def task_set():  # type: ignore[no-untyped-def]
    return generate("default", 0, "1")


def test_size_splits_and_difficulties(task_set) -> None:  # type: ignore[no-untyped-def]
    assert len(task_set) >= 200
    assert task_set.sizes()["eval"] >= 30
    assert Counter(t.difficulty for t in task_set.tasks).keys() == {"easy", "medium", "hard"}
    assert generate("default", 0, "1").fingerprint() == task_set.fingerprint()
    assert generate("default", 1, "1").fingerprint() != task_set.fingerprint()


def test_prompt_shows_signature_not_tests(task_set) -> None:  # type: ignore[no-untyped-def]
    for task in task_set.tasks[:40]:
        view = task.view()
        assert task.metadata["signature"] in view.prompt
        assert "assert" not in view.prompt and "reference" not in view.model_dump_json()


def test_reference_passes_its_hidden_asserts(task_set) -> None:  # type: ignore[no-untyped-def]
    for task in task_set.tasks:
        namespace: dict = {}
        exec(task.gold["reference"], namespace)  # our generated reference code
        for test in task.gold["tests"]:
            exec(test, dict(namespace))
        assert len(task.gold["cases"]) == len(task.gold["expected"]) == len(task.gold["tests"])


def test_strict_encoding() -> None:
    assert encode([1, (2, "x"), None, True]) == [1, [2, "x"], None, True]
    assert encode({"b": 1, "a": 2}) == {"dict": [["a", 2], ["b", 1]]}

    class Sneaky(int):
        def __eq__(self, other: object) -> bool:
            return True

    with pytest.raises(TypeError):
        encode(Sneaky(3))


def test_parse_results_keeps_first_report_per_test() -> None:
    out = 'noise\n@@m@@{"i": 0, "got": 1, "error": null}\n@@m@@{"i": 0, "got": 2}\nx'
    results, load_error = parse_results(out, "@@m@@")
    assert results[0]["got"] == 1 and load_error is None
    _, err = parse_results('@@m@@{"load_error": "SyntaxError: x"}', "@@m@@")
    assert err == "SyntaxError: x"
