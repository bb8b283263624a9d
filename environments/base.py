"""The Environment base class: one instance is one episode (session) on one task.

A subclass declares:
- `name`, `description`, its tools (`@tool` methods, see `environments.tools`),
- `build_task_set(name, seed, ctx)`: the seeded task set (cached by the framework),
- optionally `load_shared(ctx)`: heavy state shared by every session of the server
  (a search index, database files), built once per server and passed to `__init__`,
- optionally `reset()` (the first observation) and `system_prompt()`.

`step(tool_call)` validates the call against the tool's JSON schema and turns every
failure (unknown tool, bad arguments, a `ToolFailure`, any exception) into an observation
with `StepResult.error` set. A tool returning `Final(answer)` ends the episode with
`info["final_answer"]`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from environments.tasks import Task, TaskSet, cache_path, default_data_dir
from environments.tools import BadArguments, Final, ToolDef, ToolFailure, collect_tools
from services.common.wire import SessionInfo, StepResult, ToolCall, ToolError, ToolSpec

if TYPE_CHECKING:
    from fastapi import APIRouter

log = logging.getLogger(__name__)


@dataclass
class EnvContext:
    """Per-server context handed to environments: where data lives and their options."""

    data_dir: Path = field(default_factory=default_data_dir)
    options: dict[str, Any] = field(default_factory=dict)
    tool_timeout_s: float = 10.0
    max_observation_chars: int = 8000
    metrics: Any = None  # the server's services.common.metrics.Metrics, when served


class Environment:
    """Base class of every environment. Subclass it; register it in the registry."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    task_type: ClassVar[str] = ""
    task_set_names: ClassVar[tuple[str, ...]] = ("default",)
    task_set_version: ClassVar[str] = "1"
    default_seed: ClassVar[int] = 0
    max_turns: ClassVar[int | None] = None
    tools: ClassVar[dict[str, ToolDef]] = {}

    class Options(BaseModel):
        """Per-session options (SessionCreate.options); subclasses declare their own."""

        model_config = ConfigDict(extra="forbid")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.tools = collect_tools(cls)

    def __init__(self, task: Task, shared: Any = None, ctx: EnvContext | None = None) -> None:
        self.task = task
        self.shared = shared
        self.ctx = ctx or EnvContext()
        self.turns = 0
        self.done = False
        self.final_answer: str | None = None
        self.history: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.options: Any = self.Options()

    # ------------------------------------------------------------ class-level hooks

    @classmethod
    def load_shared(cls, ctx: EnvContext) -> Any:
        """Heavy state shared by all sessions (index, databases). Default: none."""
        return None

    @classmethod
    def task_set_cache_key(cls, ctx: EnvContext) -> str:
        """What the task-set cache file is keyed by, besides name and seed: the version,
        plus anything the tasks are derived from (e.g. a corpus fingerprint)."""
        return cls.task_set_version

    @classmethod
    def build_task_set(cls, name: str, seed: int, ctx: EnvContext) -> TaskSet:
        raise NotImplementedError(f"{cls.__name__} defines no task sets")

    @classmethod
    def load_task_set(
        cls, name: str = "default", ctx: EnvContext | None = None, seed: int | None = None
    ) -> TaskSet:
        """The task set `name`, from the JSONL cache or built (then cached)."""
        ctx = ctx or EnvContext()
        if name not in cls.task_set_names:
            known = ", ".join(cls.task_set_names)
            raise KeyError(f"environment '{cls.name}' has no task set '{name}' (known: {known})")
        seed = cls.default_seed if seed is None else seed
        path = cache_path(ctx.data_dir, cls.name, name, cls.task_set_cache_key(ctx), seed)
        if path.exists():
            try:
                return TaskSet.load(path)
            except (OSError, ValueError, KeyError) as exc:
                log.warning("rebuilding unreadable task-set cache %s: %s", path, exc)
        task_set = cls.build_task_set(name, seed, ctx)
        try:
            task_set.save(path)
        except OSError as exc:  # a read-only data dir still serves the in-memory set
            log.warning("cannot cache task set at %s: %s", path, exc)
        return task_set

    @classmethod
    def http_routes(cls, shared: Callable[[], Awaitable[Any]]) -> APIRouter | None:
        """Extra HTTP routes this environment adds to the environment server (e.g. the
        code environment's `POST /v1/run_code`). `await shared()` gives its shared state,
        loading the environment if needed. Default: none."""
        return None

    @classmethod
    def close_shared(cls, shared: Any) -> None:
        """Release the shared state when the server stops (e.g. a browser). Default: no-op."""

    @classmethod
    def readiness(cls, shared: Any) -> dict[str, str]:
        """Extra `/readyz` checks once loaded (each value 'ok' when fine). Default: none."""
        return {}

    @classmethod
    def tool_specs(cls) -> list[ToolSpec]:
        return [t.spec() for t in cls.tools.values()]

    # ----------------------------------------------------------- episode interface

    def system_prompt(self) -> str | None:
        return None

    def offered_tools(self) -> list[ToolSpec]:
        """The tools this session shows the agent. Default: every declared tool."""
        return self.tool_specs()

    def reset(self) -> str:
        """The first observation (the user turn). Default: the task prompt."""
        return self.task.prompt

    def close(self) -> None:
        """Release per-session resources (connections, sandboxes)."""

    def state_key(self) -> str:
        """A hash of the environment state the agent acts from (GiGPO step groups).
        Default: the task and the calls made so far."""
        payload = json.dumps([self.task.task_id, self.history], sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def session_info(self, session_id: str, observation: str) -> SessionInfo:
        return SessionInfo(
            session_id=session_id,
            env=self.name,
            task=self.task.view(),
            observation=observation,
            system_prompt=self.system_prompt(),
            tools=self.offered_tools(),
            max_turns=self.max_turns,
        )

    def step(self, call: ToolCall) -> StepResult:
        """Run one tool call. Never raises for agent mistakes: they are observations."""
        with self.lock:
            if self.done:
                over = self._error("refused", "The episode is over; no more tool calls.")
                over.done = True
                return over
            self.turns += 1
            result = self._dispatch(call)
            self.history.append((call.name, json.dumps(call.arguments, sort_keys=True)))
            if not result.done and self.max_turns is not None and self.turns >= self.max_turns:
                result.done = True
                result.info["truncated"] = True
                result.observation += f"\n[turn limit of {self.max_turns} reached]"
            self.done = self.done or result.done
            result.state_key = self.state_key()
            result.info.setdefault("turn", self.turns)
            return result

    # ------------------------------------------------------------------- internals

    def _dispatch(self, call: ToolCall) -> StepResult:
        tool = self.tools.get(call.name)
        if tool is None:
            names = ", ".join(self.tools) or "(none)"
            return self._error(
                "unknown_tool", f"Unknown tool '{call.name}'. Available tools: {names}."
            )
        try:
            args = tool.validate(call.arguments)
        except BadArguments as exc:
            return self._error("bad_arguments", f"Bad arguments for '{tool.name}': {exc}")
        try:
            output = tool.method(self, **args)
        except ToolFailure as exc:
            kind = exc.kind if exc.kind in ("tool_error", "refused", "timeout") else "tool_error"
            return self._error(kind, exc.message)  # type: ignore[arg-type]
        except Exception as exc:
            log.info("tool %s.%s failed: %r", self.name, tool.name, exc)
            return self._error("tool_error", f"{tool.name} failed: {type(exc).__name__}: {exc}")
        return self._result(output)

    def _result(self, output: Any) -> StepResult:
        if isinstance(output, Final):
            self.final_answer = output.answer
            info = {**output.info, "final_answer": output.answer}
            return StepResult(
                observation=self._clip(output.observation),
                done=True,
                reward=output.reward,
                info=info,
            )
        if isinstance(output, StepResult):
            return output
        return StepResult(observation=self._clip(str(output)))

    def _clip(self, text: str) -> str:
        limit = self.ctx.max_observation_chars
        if len(text) <= limit:
            return text
        return text[:limit] + f"\n[... truncated {len(text) - limit} characters]"

    @staticmethod
    def _error(kind: str, message: str) -> StepResult:
        error = ToolError(kind=kind, message=message)  # type: ignore[arg-type]
        return StepResult(observation=f"Error: {message}", error=error)
