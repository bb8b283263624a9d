"""Request/response models of the api service's HTTP API."""

from __future__ import annotations
