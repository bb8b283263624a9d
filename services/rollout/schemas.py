"""Request/response models of the rollout service's HTTP API."""

from __future__ import annotations
