"""Request/response models of the replay service's HTTP API."""

from __future__ import annotations
