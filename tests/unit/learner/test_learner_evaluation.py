"""The eval cadence and the evaluator's failure handling (an eval never kills training)."""

import pytest

from learner.evaluation import Evaluator, is_eval_version
from services.common.jobspec import Endpoints, JobRuntime, parse_job_spec


@pytest.mark.parametrize(
    ("version", "every", "final", "expected"),
    [(0, 5, 30, True), (5, 5, 30, True), (7, 5, 30, False), (30, 7, 30, True), (3, 0, 3, False)],
)
def test_eval_cadence(version: int, every: int, final: int, expected: bool) -> None:
    assert is_eval_version(version, every, final) is expected


def test_failed_eval_is_recorded_not_raised(tmp_path) -> None:  # type: ignore[no-untyped-def]
    spec = parse_job_spec(
        {"environments": [{"name": "arithmetic"}], "eval": {"every_n_steps": 1, "num_tasks": 2},
         "budget": {"max_steps": 1}}
    )
    # Nothing listens on port 9: every episode's environment call fails at once.
    dead = "http://127.0.0.1:9"
    runtime = JobRuntime(
        job_id="j", spec=spec, run_dir=str(tmp_path),
        endpoints=Endpoints(inference=dead, environments=dead, reward=None, replay=dead),
    )
    rows: list[tuple[int, dict[str, float], str]] = []
    evaluator = Evaluator(runtime, lambda step, values, kind: rows.append((step, values, kind)))
    evaluator.maybe_request(0)
    evaluator.maybe_request(1)
    evaluator.close(timeout_s=60)
    assert [(step, kind) for step, _, kind in rows] == [(0, "eval"), (1, "eval")]
    for _, values, _ in rows:
        assert values.get("eval_failed") == 1.0 or values["eval_ok_fraction"] == 0.0
