"""Typed client for the replay service."""

from __future__ import annotations

from services.common.client import AsyncServiceClient, ServiceClient


class ReplayClient(ServiceClient):
    """Synchronous client for the replay service."""


class AsyncReplayClient(AsyncServiceClient):
    """Asynchronous client for the replay service."""
