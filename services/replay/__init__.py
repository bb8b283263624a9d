"""Slipstream replay service: trajectory store."""
