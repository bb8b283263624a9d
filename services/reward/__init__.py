"""Slipstream reward service: verifiers: /v1/score."""
