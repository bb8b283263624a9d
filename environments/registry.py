"""The environment registry: name -> Environment subclass.

Two ways in, no import side effects:
- explicit: `register("name", MyEnv)` or `register("name", "pkg.module:MyEnv")` (lazy);
- entry points in the group `slipstream.environments` (`name = "pkg.module:MyEnv"`).

The built-in environments are listed below as lazy targets, so importing this module is
cheap (no index, no database is touched until an environment is asked for).

`get_task(env, task_set, task_id)` is what verifiers use to find gold answers without
starting a server.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import threading
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from environments.base import EnvContext, Environment
    from environments.tasks import Task, TaskSet

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "slipstream.environments"

EnvironmentFactory: TypeAlias = "type[Environment]"

_BUILTIN: dict[str, str] = {
    "arithmetic": "environments.arithmetic:ArithmeticEnvironment",
    "search": "environments.search:SearchEnvironment",
    "sql": "environments.sql:SQLEnvironment",
    "code": "environments.code:CodeEnvironment",
    "web": "environments.web:WebEnvironment",
}

_explicit: dict[str, type[Environment] | str] = {}
_loaded: dict[str, type[Environment]] = {}
_task_sets: dict[tuple[str, str, int | None, str], TaskSet] = {}
_lock = threading.RLock()


class UnknownEnvironment(KeyError):
    """No environment is registered under that name."""


def register(name: str, target: type[Environment] | str, *, replace: bool = False) -> None:
    """Register an Environment subclass (or a lazy "module:Class" target) under `name`."""
    with _lock:
        if name in _explicit and not replace:
            raise ValueError(f"environment '{name}' is already registered")
        _explicit[name] = target
        _loaded.pop(name, None)


def unregister(name: str) -> None:
    with _lock:
        _explicit.pop(name, None)
        _loaded.pop(name, None)


def _entry_point_targets() -> dict[str, str]:
    try:
        return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    except Exception as exc:  # broken metadata must not take the server down
        log.warning("cannot read entry points %s: %s", ENTRY_POINT_GROUP, exc)
        return {}


def _targets() -> dict[str, type[Environment] | str]:
    """Builtins < entry points < explicit registrations."""
    return {**_BUILTIN, **_entry_point_targets(), **_explicit}


def _importable(target: type[Environment] | str) -> bool:
    if not isinstance(target, str):
        return True
    module = target.split(":", 1)[0]
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def available() -> list[str]:
    """Names of the registered environments whose code is present, sorted."""
    with _lock:
        return sorted(name for name, target in _targets().items() if _importable(target))


def _resolve(name: str, target: type[Environment] | str) -> type[Environment]:
    from environments.base import Environment

    if isinstance(target, str):
        module_name, _, attr = target.partition(":")
        obj = importlib.import_module(module_name)
        for part in (attr or "Environment").split("."):
            obj = getattr(obj, part)
        target = obj  # type: ignore[assignment]
    if not (isinstance(target, type) and issubclass(target, Environment)):
        raise TypeError(f"environment '{name}' does not resolve to an Environment subclass")
    return target


def get_environment(name: str) -> type[Environment]:
    """The Environment subclass registered as `name` (the class is the session factory)."""
    with _lock:
        if name in _loaded:
            return _loaded[name]
        targets = _targets()
        if name not in targets or not _importable(targets[name]):
            known = ", ".join(available()) or "(none)"
            raise UnknownEnvironment(f"unknown environment '{name}' (available: {known})")
        cls = _resolve(name, targets[name])
        _loaded[name] = cls
        return cls


def get_task_set(
    env: str,
    task_set: str = "default",
    *,
    seed: int | None = None,
    data_dir: str | Path | None = None,
    ctx: EnvContext | None = None,
) -> TaskSet:
    """Load (and cache in-process) an environment's task set, no server needed."""
    from environments.base import EnvContext

    if ctx is None:
        ctx = EnvContext() if data_dir is None else EnvContext(data_dir=Path(data_dir))
    key = (env, task_set, seed, str(ctx.data_dir))
    with _lock:
        if key not in _task_sets:
            _task_sets[key] = get_environment(env).load_task_set(task_set, ctx, seed)
        return _task_sets[key]


def get_task(
    env: str,
    task_set: str,
    task_id: str,
    *,
    seed: int | None = None,
    data_dir: str | Path | None = None,
) -> Task:
    """One task, gold included. Raises KeyError (or UnknownEnvironment) when absent."""
    return get_task_set(env, task_set, seed=seed, data_dir=data_dir).get(task_id)
