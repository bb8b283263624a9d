"""Helpers for the reward unit tests (imported by name: this folder is on sys.path)."""

from __future__ import annotations

import subprocess
import sys

from environments.tasks import Task
from services.reward.gold import GoldUnavailable, TaskLookup
from services.reward.verifiers.code import RunOutcome


def table_lookup(tasks: list[Task], env: str = "test") -> TaskLookup:
    """A lookup over an explicit list of tasks (for envs whose task sets are not built)."""
    by_id = {t.task_id: t for t in tasks}

    def lookup(env_: str, task_set: str, task_id: str) -> Task:
        if env_ != env or task_id not in by_id:
            raise GoldUnavailable(f"no task {env_}/{task_set}/{task_id}")
        return by_id[task_id]

    return lookup


def subprocess_runner(source: str, timeout_s: float) -> RunOutcome:
    """Runs the harness with Debian's python3 in a child process (no sandbox): stands in
    for the code environment's sandbox in tests that exercise the verifier's logic."""
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", source],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        return RunOutcome(stdout=out, stderr="", returncode=None, timed_out=True)
    return RunOutcome(stdout=done.stdout, stderr=done.stderr, returncode=done.returncode)
