"""The arithmetic toy environment."""

from environments.arithmetic.env import ArithmeticEnvironment

__all__ = ["ArithmeticEnvironment"]
