"""Slipstream learner: advantages, off-policy losses, checkpoints, weight publication."""
