"""Request/response models of the environments service's HTTP API."""

from __future__ import annotations
