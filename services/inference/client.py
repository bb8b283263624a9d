"""Typed client for the inference service."""

from __future__ import annotations

from services.common.client import AsyncServiceClient, ServiceClient


class InferenceClient(ServiceClient):
    """Synchronous client for the inference service."""


class AsyncInferenceClient(AsyncServiceClient):
    """Asynchronous client for the inference service."""
