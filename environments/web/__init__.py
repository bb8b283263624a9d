"""The web environment: a local shop rendered as text and MiniWoB++ pages in Chromium."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from environments.web.env import WebEnvironment

__all__ = ["WebEnvironment"]


def __getattr__(name: str) -> Any:
    if name == "WebEnvironment":
        from environments.web.env import WebEnvironment

        return WebEnvironment
    raise AttributeError(name)
