"""Slipstream services: one FastAPI app per package."""
