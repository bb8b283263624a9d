"""The code environment: a bubblewrap sandbox (`environments.code.sandbox.run_python`),
an execution pool with `POST /v1/run_code`, and function-synthesis tasks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from environments.code.env import CodeEnvironment

__all__ = ["CodeEnvironment"]


def __getattr__(name: str) -> Any:
    # lazy, so `environments.code.sandbox` stays importable without the env framework
    if name == "CodeEnvironment":
        from environments.code.env import CodeEnvironment

        return CodeEnvironment
    raise AttributeError(name)
