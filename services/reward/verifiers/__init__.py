"""Verifiers: one per task type, in an explicit registry (`build_registry`)."""

from services.reward.verifiers.base import Verdict, Verifier, VerifierError, VerifierRegistry

__all__ = ["Verdict", "Verifier", "VerifierError", "VerifierRegistry"]
