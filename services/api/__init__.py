"""Slipstream api service: control plane: jobs, tokens, dashboard."""
