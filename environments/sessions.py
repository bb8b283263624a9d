"""Sessions: the live episodes of one environment server.

`EnvironmentHost` owns the environment classes the server serves, their shared state
(built once, in a worker thread), their task sets, and the live sessions with a TTL and a
cap. Resets and tool calls run in a bounded thread pool under a time limit: a call past it
answers a 'timeout' observation (the thread finishes in the background; the session's lock
keeps the next call from overlapping it).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import ValidationError

from environments.base import EnvContext, Environment
from environments.registry import UnknownEnvironment, available, get_environment
from environments.schemas import EnvironmentDescription
from environments.settings import EnvironmentsSettings
from environments.tasks import Split, Task, TaskSet
from services.common.errors import (
    BadRequest,
    NotFound,
    NotReady,
    Overloaded,
    SlipstreamError,
    UpstreamError,
)
from services.common.metrics import Metrics
from services.common.wire import (
    SessionCreate,
    SessionInfo,
    StepResult,
    TaskView,
    ToolCall,
    ToolError,
)

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class Session:
    session_id: str
    env_name: str
    env: Environment
    created: float = field(default_factory=time.monotonic)
    last_used: float = field(default_factory=time.monotonic)


@dataclass
class _Loaded:
    cls: type[Environment]
    ctx: EnvContext
    shared: Any
    task_sets: dict[str, TaskSet]


class SessionMetrics:
    def __init__(self, metrics: Metrics) -> None:
        self.live = metrics.gauge("sessions_live", "Live sessions.", ["env"])
        self.opened = metrics.counter("sessions_opened_total", "Sessions opened.", ["env"])
        self.rejected = metrics.counter(
            "sessions_rejected_total", "Session creations refused.", ["reason"]
        )
        self.expired = metrics.counter("sessions_expired_total", "Sessions closed by TTL.", ["env"])
        self.step_latency = metrics.histogram("step_seconds", "Tool-call latency.", ["env"])
        self.reset_latency = metrics.histogram("reset_seconds", "Reset latency.", ["env"])
        self.steps = metrics.counter("steps_total", "Tool calls.", ["env", "tool"])
        self.errors = metrics.counter("step_errors_total", "Tool-call errors.", ["env", "kind"])


class EnvironmentHost:
    """Everything one environment server serves. Create in the app's lifespan."""

    def __init__(self, settings: EnvironmentsSettings, metrics: Metrics) -> None:
        self.settings = settings
        self.metrics = SessionMetrics(metrics)
        self.app_metrics = metrics
        names = settings.envs or available()
        self.env_names = list(dict.fromkeys(names))
        self.pool = ThreadPoolExecutor(settings.tool_threads, thread_name_prefix="env-tool")
        self.sessions: dict[str, Session] = {}
        self._pending = 0
        self._loaded: dict[str, _Loaded] = {}
        self._load_lock = threading.Lock()
        self.load_errors: dict[str, str] = {}

    # ----------------------------------------------------------------- loading

    def context(self, name: str) -> EnvContext:
        kwargs: dict[str, Any] = {
            "options": dict(self.settings.env_options.get(name, {})),
            "tool_timeout_s": self.settings.step_timeout_s,
            "max_observation_chars": self.settings.max_observation_chars,
            "metrics": self.app_metrics,
        }
        if self.settings.data_dir is not None:
            kwargs["data_dir"] = self.settings.data_dir
        return EnvContext(**kwargs)

    def load(self, name: str) -> _Loaded:
        """Import, build shared state and the default task set (blocking; thread-safe)."""
        if name not in self.env_names:
            raise NotFound(
                f"environment '{name}' is not served here (served: {', '.join(self.env_names)})",
                field="env",
            )
        with self._load_lock:
            if name in self._loaded:
                return self._loaded[name]
            try:
                cls = get_environment(name)
            except UnknownEnvironment as exc:
                raise NotFound(str(exc.args[0]), field="env") from None
            ctx = self.context(name)
            started = time.perf_counter()
            try:
                shared = cls.load_shared(ctx)
                task_sets = {ts: cls.load_task_set(ts, ctx) for ts in cls.task_set_names}
            except Exception as exc:
                log.exception("environment %s failed to load", name)
                self.load_errors[name] = f"{type(exc).__name__}: {exc}"
                raise NotReady(f"environment '{name}' failed to load: {exc}") from exc
            self.load_errors.pop(name, None)
            log.info(
                "loaded environment %s in %.2fs (%s)",
                name,
                time.perf_counter() - started,
                ", ".join(repr(ts) for ts in task_sets.values()),
            )
            self._loaded[name] = loaded = _Loaded(cls, ctx, shared, task_sets)
            return loaded

    def preload(self) -> None:
        for name in self.env_names:
            try:
                self.load(name)
            except Exception:  # one broken env must not stop the others (already logged)
                continue

    def readiness(self) -> dict[str, str]:
        checks = {}
        for name in self.env_names:
            if name in self.load_errors:
                checks[name] = f"error: {self.load_errors[name]}"
            elif name in self._loaded:
                checks[name] = "ok"
                loaded = self._loaded[name]
                checks.update(loaded.cls.readiness(loaded.shared))
            else:
                checks[name] = "loading"
        return checks

    async def run(self, fn: Callable[[], T], timeout: float) -> T:
        loop = asyncio.get_running_loop()
        return await asyncio.wait_for(loop.run_in_executor(self.pool, fn), timeout)

    async def loaded(self, name: str) -> _Loaded:
        if name in self._loaded:
            return self._loaded[name]
        return await self.run(lambda: self.load(name), self.settings.reset_timeout_s * 10)

    # ---------------------------------------------------------------- sessions

    def _find_task(self, loaded: _Loaded, req: SessionCreate) -> Task:
        if req.task_id is None:
            return loaded.task_sets[loaded.cls.task_set_names[0]].sample(req.split, req.seed)
        for task_set in loaded.task_sets.values():
            if req.task_id in task_set:
                return task_set.get(req.task_id)
        raise NotFound(f"task '{req.task_id}' is not in environment '{req.env}'", field="task_id")

    async def create(self, req: SessionCreate) -> SessionInfo:
        if len(self.sessions) + self._pending >= self.settings.max_sessions:
            self.metrics.rejected.labels("cap").inc()
            raise Overloaded(
                f"{self.settings.max_sessions} sessions are live (the cap); "
                "close finished sessions or retry later"
            )
        self._pending += 1
        try:
            loaded = await self.loaded(req.env)
            task = self._find_task(loaded, req)
            env = loaded.cls(task, loaded.shared, loaded.ctx)
            env.options = _parse_options(loaded.cls, req)
            started = time.perf_counter()
            try:
                observation = await self.run(env.reset, self.settings.reset_timeout_s)
            except TimeoutError:
                self.metrics.rejected.labels("reset_timeout").inc()
                raise Overloaded(
                    f"reset of '{req.env}' took longer than {self.settings.reset_timeout_s}s"
                ) from None
            except SlipstreamError:
                raise
            except Exception as exc:
                log.exception("reset of %s failed", req.env)
                self.metrics.rejected.labels("reset_error").inc()
                raise UpstreamError(f"environment '{req.env}' failed to reset: {exc}") from exc
            self.metrics.reset_latency.labels(req.env).observe(time.perf_counter() - started)
            session_id = uuid.uuid4().hex
            self.sessions[session_id] = Session(session_id, req.env, env)
        finally:
            self._pending -= 1
        self.metrics.opened.labels(req.env).inc()
        self.metrics.live.labels(req.env).inc()
        return env.session_info(session_id, observation)

    def get(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise NotFound(
                f"session '{session_id}' does not exist (closed or expired)", field="session_id"
            )
        return session

    async def step(self, session_id: str, call: ToolCall) -> StepResult:
        session = self.get(session_id)
        session.last_used = time.monotonic()
        name = session.env_name
        started = time.perf_counter()
        try:
            result = await self.run(lambda: session.env.step(call), self.settings.step_timeout_s)
        except TimeoutError:
            message = (
                f"the tool call '{call.name}' did not finish within "
                f"{self.settings.step_timeout_s:g}s and was abandoned"
            )
            result = StepResult(
                observation=f"Error: {message}", error=ToolError(kind="timeout", message=message)
            )
        except Exception as exc:  # a bug in the env, not the agent: still an observation
            log.exception("step of %s failed outside its tools", name)
            message = f"the environment failed: {type(exc).__name__}: {exc}"
            result = StepResult(
                observation=f"Error: {message}", error=ToolError(kind="tool_error", message=message)
            )
        session.last_used = time.monotonic()
        tool = call.name if call.name in session.env.tools else "(unknown)"
        self.metrics.steps.labels(name, tool).inc()
        self.metrics.step_latency.labels(name).observe(time.perf_counter() - started)
        if result.error is not None:
            self.metrics.errors.labels(name, result.error.kind).inc()
        return result

    async def close(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is None:
            raise NotFound(f"session '{session_id}' does not exist", field="session_id")
        self._dispose(session)

    def _dispose(self, session: Session) -> None:
        self.metrics.live.labels(session.env_name).dec()
        try:
            self.pool.submit(session.env.close)
        except RuntimeError:  # pool already shut down
            session.env.close()

    def sweep(self) -> int:
        """Close sessions idle past the TTL; returns how many."""
        deadline = time.monotonic() - self.settings.session_ttl_s
        expired = [s for s in self.sessions.values() if s.last_used < deadline]
        for session in expired:
            self.sessions.pop(session.session_id, None)
            self.metrics.expired.labels(session.env_name).inc()
            self._dispose(session)
        if expired:
            log.info("expired %d idle sessions", len(expired))
        return len(expired)

    async def sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.sweep_interval_s)
            self.sweep()

    def shutdown(self) -> None:
        for session in list(self.sessions.values()):
            self.sessions.pop(session.session_id, None)
            self._dispose(session)
        self.pool.shutdown(wait=False, cancel_futures=True)
        for name, loaded in list(self._loaded.items()):
            try:
                loaded.cls.close_shared(loaded.shared)
            except Exception:  # one env failing to clean up must not stop the others
                log.exception("environment %s: releasing shared state failed", name)

    # ------------------------------------------------------------------- catalog

    async def tasks(
        self, env: str, split: Split, offset: int, limit: int, task_set: str | None
    ) -> list[TaskView]:
        loaded = await self.loaded(env)
        name = task_set or loaded.cls.task_set_names[0]
        if name not in loaded.task_sets:
            raise BadRequest(f"environment '{env}' has no task set '{name}'", field="task_set")
        tasks = loaded.task_sets[name].split(split)[offset : offset + limit]
        return [t.view() for t in tasks]

    def describe(self) -> list[EnvironmentDescription]:
        out = []
        for name in self.env_names:
            loaded = self._loaded.get(name)
            if loaded is None:
                out.append(
                    EnvironmentDescription(
                        name=name, loaded=False, error=self.load_errors.get(name)
                    )
                )
                continue
            out.append(
                EnvironmentDescription(
                    name=name,
                    description=loaded.cls.description,
                    task_type=loaded.cls.task_type,
                    loaded=True,
                    tools=loaded.cls.tool_specs(),
                    max_turns=loaded.cls.max_turns,
                    task_sets={
                        ts_name: {**ts.sizes(), "version": ts.version}
                        for ts_name, ts in loaded.task_sets.items()
                    },
                    live_sessions=sum(1 for s in self.sessions.values() if s.env_name == name),
                )
            )
        return out


def _parse_options(cls: type[Environment], req: SessionCreate) -> Any:
    """The session's options, validated by the environment's own Options model."""
    try:
        return cls.Options.model_validate(req.options)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(part) for part in err["loc"])
        message = "unknown option" if err["type"] == "extra_forbidden" else err["msg"]
        raise BadRequest(
            f"environment '{req.env}' option '{where}': {message}", field=f"options.{where}"
        ) from None

