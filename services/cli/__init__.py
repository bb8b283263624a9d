"""The `slipstream` command line."""
