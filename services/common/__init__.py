"""Shared plumbing for every Slipstream service: settings, logging, metrics, health, clients.

This package stays light on purpose: nothing here imports torch or vllm.
"""
