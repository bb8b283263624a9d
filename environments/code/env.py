"""The code environment: `run_python(code)` and `submit(code)` over function-synthesis
tasks, every execution in the bubblewrap sandbox.

Options (`SLIPSTREAM_ENVIRONMENTS_ENV_OPTIONS='{"code": {...}}'`): `sandbox` (a dict of
`SandboxSettings` fields, on top of `SLIPSTREAM_SANDBOX_*` env vars), `run_limits` (a
dict of `Limits` fields for `run_python`) and `per_test_s` (per hidden test time limit).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, ClassVar

from fastapi import APIRouter

from environments.base import EnvContext, Environment
from environments.code import tasks as code_tasks
from environments.code.grading import grade
from environments.code.models import Limits, SandboxResult
from environments.code.pool import SandboxPool
from environments.tasks import TaskSet
from environments.tools import Final, ToolFailure, tool
from services.common.errors import NotReady, Overloaded

log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You are a careful Python programmer. Use run_python to test ideas; its output shows "
    "stdout, stderr and how the run ended. Finish with submit(code) containing the complete "
    "function definition."
)
RUN_LIMITS = Limits(wall_time_s=5, cpu_time_s=5, memory_mb=512, max_output_bytes=8192)


def render_run(result: SandboxResult, max_chars: int = 4000) -> str:
    """A compact observation of one execution."""
    lines = [f"[run ended: {result.status.value}"
             + (f", exit code {result.exit_code}" if result.exit_code is not None else "")
             + (f", signal {result.signal}" if result.signal else "")
             + f", {result.wall_time_s:.2f}s]"]  # fmt: skip
    for name, text, cut in (
        ("stdout", result.stdout, result.stdout_truncated),
        ("stderr", result.stderr, result.stderr_truncated),
    ):
        if text or cut:
            body = text[-max_chars:] if len(text) > max_chars else text
            lines.append(f"{name}:\n{body.rstrip()}" + ("\n[... output truncated]" if cut else ""))
    if result.status.value == "ok" and not result.stdout and not result.stderr:
        lines.append("(no output)")
    return "\n".join(lines)


class CodeEnvironment(Environment):
    name = "code"
    description = (
        "Function synthesis with a sandboxed Python interpreter (bubblewrap); "
        "reward = fraction of hidden unit tests passed."
    )
    task_type = "code"
    task_set_names: ClassVar[tuple[str, ...]] = ("default", "small")
    task_set_version = "1"
    max_turns = 12

    @classmethod
    def build_task_set(cls, name: str, seed: int, ctx: EnvContext) -> TaskSet:
        return code_tasks.generate(name, seed, cls.task_set_version)

    @classmethod
    def load_shared(cls, ctx: EnvContext) -> SandboxPool:
        """The sandbox pool every session shares. Raises `IsolationUnavailable` when the
        isolation floor cannot be reached: the environment then refuses to load."""
        from environments.code.sandbox import Sandbox
        from environments.code.settings import SandboxSettings

        settings = SandboxSettings(**ctx.options.get("sandbox", {}))
        pool = SandboxPool(Sandbox(settings), ctx.metrics)
        log.info("code environment sandbox: %s", pool.sandbox.describe())
        return pool

    @classmethod
    def http_routes(cls, shared: Callable[[], Awaitable[Any]]) -> APIRouter | None:
        from environments.code.app import build_router

        async def get_pool(_: object) -> SandboxPool:
            try:
                return await shared()
            except Exception as exc:  # e.g. IsolationUnavailable: refuse, don't 500
                raise NotReady(f"the code sandbox is unavailable: {exc}") from exc

        return build_router(get_pool)  # type: ignore[arg-type]

    @classmethod
    def close_shared(cls, shared: SandboxPool) -> None:
        shared.shutdown()

    @classmethod
    def readiness(cls, shared: Any) -> dict[str, str]:
        from environments.code.app import readiness_checks

        return readiness_checks(shared)

    # ---------------------------------------------------------------- episode

    @property
    def pool(self) -> SandboxPool:
        return self.shared

    def _run_limits(self) -> Limits:
        return RUN_LIMITS.model_copy(update=self.ctx.options.get("run_limits", {}))

    def system_prompt(self) -> str:
        return SYSTEM_PROMPT

    @tool("Run a Python 3 program in a sandbox (no network, no files kept between runs) "
          "and see its stdout, stderr and exit status.")  # fmt: skip
    def run_python(self, code: Annotated[str, "The complete program to run."]) -> str:
        try:
            result = self.pool.run_sync(code, limits=self._run_limits())
        except Overloaded as exc:
            raise ToolFailure(f"the sandbox is busy, try again: {exc.message}") from None
        return render_run(result)

    @tool("Submit your final solution: the complete source defining the function. "
          "Ends the episode; hidden unit tests decide the reward.", final=True)  # fmt: skip
    def submit(self, code: Annotated[str, "Source code defining the requested function."]) -> Final:
        gold = self.task.gold
        try:
            result = grade(
                self.pool, code, gold["entry_point"], gold["cases"], gold["expected"],
                per_test_s=float(self.ctx.options.get("per_test_s", 1.0)),
                limits=self._run_limits(),
            )  # fmt: skip
        except Overloaded as exc:
            raise ToolFailure(f"the sandbox is busy, submit again: {exc.message}") from None
        info = {
            "passed": result.passed,
            "total": result.total,
            "isolation": result.sandbox.isolation.value if result.sandbox else None,
            "sandbox_status": result.sandbox.status.value if result.sandbox else None,
        }
        return Final(
            answer=code,
            observation=f"Submitted: {result.summary()}. The episode is over.",
            reward=result.reward,
            info=info,
        )
