"""Slipstream environment servers: search, code, sql, web and the arithmetic toy."""
