"""Request/response models of the inference service's HTTP API."""

from __future__ import annotations
