"""Typed client for the rollout service."""

from __future__ import annotations

from services.common.client import AsyncServiceClient, ServiceClient


class RolloutClient(ServiceClient):
    """Synchronous client for the rollout service."""


class AsyncRolloutClient(AsyncServiceClient):
    """Asynchronous client for the rollout service."""
