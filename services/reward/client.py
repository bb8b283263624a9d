"""Typed client for the reward service."""

from __future__ import annotations

from services.common.client import AsyncServiceClient, ServiceClient


class RewardClient(ServiceClient):
    """Synchronous client for the reward service."""


class AsyncRewardClient(AsyncServiceClient):
    """Asynchronous client for the reward service."""
