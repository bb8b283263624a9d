"""Slipstream rollout service: rollout worker pool."""
