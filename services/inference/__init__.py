"""Slipstream inference service: OpenAI-compatible + token engine."""
