"""The search environment (Wikipedia lead extracts, BM25)."""

from environments.search.env import SearchEnvironment

__all__ = ["SearchEnvironment"]
