"""The router's view of its replicas: health, outstanding requests, policy version, and the
choice of a replica (sticky by episode, else least outstanding requests)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass

import httpx

log = logging.getLogger(__name__)


@dataclass
class Replica:
    url: str
    healthy: bool = False
    outstanding: int = 0
    version: int | None = None
    state: str = "unknown"
    last_error: str | None = None
    checked_at: float = 0.0

    def view(self) -> dict[str, object]:
        return {
            "url": self.url, "healthy": self.healthy, "outstanding": self.outstanding,
            "version": self.version, "state": self.state, "last_error": self.last_error,
        }


class ReplicaPool:
    def __init__(self, urls: list[str], sticky_capacity: int = 100_000) -> None:
        self.replicas = [Replica(u.rstrip("/")) for u in urls]
        self._sticky: OrderedDict[str, Replica] = OrderedDict()
        self._sticky_capacity = sticky_capacity
        self._tiebreak = itertools.count()

    def healthy(self) -> list[Replica]:
        return [r for r in self.replicas if r.healthy]

    def pick(self, episode_id: str | None, exclude: set[str] | frozenset[str] = frozenset()
             ) -> Replica | None:
        """Sticky replica of the episode if it is healthy, else the healthy replica with
        the fewest outstanding requests (ties rotate)."""
        candidates = [r for r in self.healthy() if r.url not in exclude]
        if not candidates:
            return None
        if episode_id is not None:
            sticky = self._sticky.get(episode_id)
            if sticky is not None and sticky in candidates:
                self._sticky.move_to_end(episode_id)
                return sticky
        turn = next(self._tiebreak)
        n = len(candidates)
        best = min(range(n), key=lambda i: (candidates[i].outstanding, (i - turn) % n))
        chosen = candidates[best]
        if episode_id is not None:
            self._remember(episode_id, chosen)
        return chosen

    def _remember(self, episode_id: str, replica: Replica) -> None:
        self._sticky[episode_id] = replica
        self._sticky.move_to_end(episode_id)
        while len(self._sticky) > self._sticky_capacity:
            self._sticky.popitem(last=False)

    def mark_failed(self, replica: Replica, error: str) -> None:
        if replica.healthy:
            log.warning("replica %s failed: %s", replica.url, error)
        replica.healthy = False
        replica.state = "unreachable"
        replica.last_error = error

    async def check(self, http: httpx.AsyncClient, replica: Replica, timeout: float) -> None:
        try:
            response = await http.get(f"{replica.url}/v1/status", timeout=timeout)
            body = response.json()
            replica.state = str(body.get("state", "unknown"))
            replica.version = body.get("version")
            replica.healthy = response.status_code == 200 and replica.state == "ok"
            replica.last_error = None if replica.healthy else replica.state
        except (httpx.HTTPError, ValueError) as exc:
            self.mark_failed(replica, f"{type(exc).__name__}: {exc}")
        replica.checked_at = time.time()

    async def check_all(self, http: httpx.AsyncClient, timeout: float) -> None:
        await asyncio.gather(*(self.check(http, r, timeout) for r in self.replicas))

    async def watch(self, http: httpx.AsyncClient, interval: float, timeout: float) -> None:
        """Health-check every replica forever (a background task)."""
        while True:
            with contextlib.suppress(Exception):
                await self.check_all(http, timeout)
            await asyncio.sleep(interval)
