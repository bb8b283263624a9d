"""The verifier interface and the registry that maps task types to verifiers."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from services.common.wire import ScoreItem


class VerifierError(Exception):
    """The verifier could not produce a real reward for this item (missing gold, bad
    database, unparseable judge verdict...). Reported as ScoreResult(ok=False)."""


@dataclass
class Verdict:
    """A real reward with the evidence behind it."""

    reward: float
    details: dict[str, Any] = field(default_factory=dict)


class Verifier:
    """Base class. Blocking verifiers override `score` (run in a worker thread); those that
    wait on the network override `ascore` and set `is_async = True`."""

    name: str = ""
    description: str = ""
    is_async: bool = False

    def score(self, item: ScoreItem) -> Verdict:
        raise NotImplementedError

    async def ascore(self, item: ScoreItem) -> Verdict:
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release resources (HTTP clients); called when the scorer shuts down."""


class VerifierRegistry:
    """An explicit map task_type -> verifier (no import-time registration)."""

    def __init__(self, verifiers: Iterable[Verifier] = ()) -> None:
        self._by_name: dict[str, Verifier] = {}
        for verifier in verifiers:
            self.register(verifier)

    def register(self, verifier: Verifier, *, replace: bool = False) -> None:
        if not verifier.name:
            raise ValueError(f"{type(verifier).__name__} has no name")
        if verifier.name in self._by_name and not replace:
            raise ValueError(f"verifier '{verifier.name}' is already registered")
        self._by_name[verifier.name] = verifier

    def get(self, name: str) -> Verifier:
        try:
            return self._by_name[name]
        except KeyError:
            known = ", ".join(sorted(self._by_name))
            raise KeyError(f"no verifier for task type '{name}' (known: {known})") from None

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[Verifier]:
        return iter(self._by_name.values())

    def names(self) -> list[str]:
        return list(self._by_name)
