"""Request/response models of the reward service's HTTP API."""

from __future__ import annotations
