"""Typed client for the environments service."""

from __future__ import annotations

from services.common.client import AsyncServiceClient, ServiceClient


class EnvironmentsClient(ServiceClient):
    """Synchronous client for the environments service."""


class AsyncEnvironmentsClient(AsyncServiceClient):
    """Asynchronous client for the environments service."""
