"""Typed client for the api service."""

from __future__ import annotations

from services.common.client import AsyncServiceClient, ServiceClient


class ApiClient(ServiceClient):
    """Synchronous client for the api service."""


class AsyncApiClient(AsyncServiceClient):
    """Asynchronous client for the api service."""
