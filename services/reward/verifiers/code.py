"""code: fraction of the task's hidden unit tests that the submitted program passes.

Which reward is used (setting `code_mode`):
- `tests`: re-run the hidden tests here, in the code environment's bubblewrap sandbox.
- `env_reward`: trust `ScoreItem.env_reward`, which the code environment computed itself by
  running the same hidden tests in the same sandbox when the agent submitted. This avoids
  running untrusted code twice; rollout workers are trusted infrastructure.
- `auto` (default): `env_reward` when the item carries one, the tests otherwise.

Hidden tests are `task.gold["tests"]`: a list of Python snippets (usually `assert` lines),
each one test. The program runs once, then each test runs in a copy of its namespace; a
harness reports per-test pass/fail on a line tagged with a per-run random marker.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from services.common.wire import ScoreItem
from services.reward.gold import TaskLookup
from services.reward.verifiers.base import Verdict, Verifier, VerifierError
from services.reward.verifiers.extract import last_assistant_text

_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.S | re.I)


@dataclass
class RunOutcome:
    """What one sandboxed run produced."""

    stdout: str
    stderr: str
    returncode: int | None
    timed_out: bool = False
    isolation: str | None = None


CodeRunner = Callable[[str, float], RunOutcome]
"""Runs Python source under limits with a wall-clock timeout; returns its outcome."""

_HARNESS = """
import io as _io, json as _json, sys as _sys
_program = {program!r}
_tests = {tests!r}
_marker = {marker!r}
_out = _sys.stdout
_sys.stdout = _sys.stderr = _io.StringIO()  # the program's output must not bury the report
_results = []
_ns = {{"__name__": "__main__"}}
try:
    exec(compile(_program, "<solution>", "exec"), _ns)
    _loaded = None
except BaseException as _exc:
    _loaded = type(_exc).__name__ + ": " + str(_exc)[:200]
for _test in _tests:
    if _loaded is not None:
        _results.append(False)
        continue
    try:
        exec(compile(_test, "<test>", "exec"), dict(_ns))
        _results.append(True)
    except BaseException:
        _results.append(False)
_out.write("\\n" + _marker + _json.dumps({{"passed": _results, "load_error": _loaded}}) + "\\n")
_out.flush()
"""


def extract_program(item: ScoreItem) -> str | None:
    """The submitted program: `final_answer` (fences stripped), else the last ```python
    block of the last assistant message."""
    text = item.final_answer if item.final_answer is not None else last_assistant_text(item)
    if text is None:
        return None
    blocks = _FENCE.findall(text)
    if blocks:
        return blocks[-1]
    return text if item.final_answer is not None else None


def build_harness(program: str, tests: list[str], marker: str) -> str:
    return _HARNESS.format(program=program, tests=tests, marker=marker)


def parse_report(outcome: RunOutcome, marker: str, n_tests: int) -> dict[str, Any] | None:
    for line in reversed(outcome.stdout.splitlines()):
        if line.startswith(marker):
            report = json.loads(line[len(marker) :])
            if len(report.get("passed", [])) == n_tests:
                return report
    return None


def hidden_tests(gold: dict[str, Any]) -> list[str]:
    tests = gold.get("tests")
    if isinstance(tests, str):
        return [tests]
    if isinstance(tests, list) and tests and all(isinstance(t, str) for t in tests):
        return tests
    raise VerifierError("task has no hidden tests (gold['tests'] must be a list of str)")


def sandbox_runner(source: str, timeout_s: float) -> RunOutcome:
    """The default runner: the code environment's bubblewrap sandbox
    (`environments.code.sandbox.run_python`) with its default limits and our wall clock."""
    try:
        from environments.code.models import Limits, Status
        from environments.code.sandbox import run_python
    except ImportError as exc:
        raise VerifierError(f"the code sandbox is not available: {exc}") from exc
    limits = Limits(wall_time_s=timeout_s, cpu_time_s=timeout_s)
    try:
        result = run_python(source, limits=limits)
    except Exception as exc:  # busy slots, bad settings: the sandbox failed, not the code
        raise VerifierError(f"sandbox failed: {type(exc).__name__}: {exc}") from exc
    if result.error:
        raise VerifierError(f"sandbox failed ({result.isolation}): {result.error}")
    return RunOutcome(
        stdout=result.stdout,
        stderr=result.stderr,
        returncode=result.exit_code,
        timed_out=result.status == Status.TIMEOUT,
        isolation=str(result.isolation),
    )


class CodeVerifier(Verifier):
    name = "code"
    description = (
        "Fraction of the hidden unit tests passed, run in the bubblewrap sandbox; or the "
        "environment's own sandboxed test reward (env_reward) per code_mode."
    )

    def __init__(
        self,
        lookup: TaskLookup,
        runner: CodeRunner = sandbox_runner,
        *,
        mode: Literal["auto", "tests", "env_reward"] = "auto",
        run_timeout_s: float = 10.0,
    ) -> None:
        self.lookup = lookup
        self.runner = runner
        self.mode = mode
        self.run_timeout_s = run_timeout_s

    def score(self, item: ScoreItem) -> Verdict:
        use_env = self.mode == "env_reward" or (self.mode == "auto" and item.env_reward is not None)
        if use_env:
            if item.env_reward is None:
                raise VerifierError("code_mode is env_reward but the item has no env_reward")
            return Verdict(float(item.env_reward), {"source": "env_reward"})
        return self._run_tests(item)

    def _run_tests(self, item: ScoreItem) -> Verdict:
        tests = hidden_tests(self.lookup(item.env, item.task_set, item.task_id).gold)
        program = extract_program(item)
        details: dict[str, Any] = {"source": "tests", "total": len(tests)}
        if program is None:
            return Verdict(0.0, {**details, "passed": 0, "answered": False})
        marker = "@@slipstream-" + secrets.token_hex(8) + "@@"
        outcome = self.runner(build_harness(program, tests, marker), self.run_timeout_s)
        details["isolation"] = outcome.isolation
        report = parse_report(outcome, marker, len(tests))
        if report is None:  # killed, timed out or exited early: no test counts as passed
            reason = "timeout" if outcome.timed_out else f"exit {outcome.returncode}"
            return Verdict(0.0, {**details, "passed": 0, "run_error": reason})
        passed = sum(bool(p) for p in report["passed"])
        details.update(passed=passed, load_error=report["load_error"])
        return Verdict(passed / len(tests), details)
