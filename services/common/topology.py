"""Which services exist, their module and default local port: the single source the CLI,
docker-compose and the tests agree on."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class ServiceEntry:
    name: str
    module: str
    default_port: int
    description: str

    @property
    def port(self) -> int:
        """The default port, unless `SLIPSTREAM_<NAME>_PORT` says otherwise."""
        return int(os.environ.get(f"SLIPSTREAM_{self.name.upper()}_PORT", self.default_port))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


SERVICES: tuple[ServiceEntry, ...] = (
    ServiceEntry("api", "services.api", 8000, "control plane: jobs, tokens, dashboard"),
    ServiceEntry("inference", "services.inference", 8001, "OpenAI-compatible + token engine"),
    ServiceEntry("reward", "services.reward", 8002, "verifiers: /v1/score"),
    ServiceEntry("replay", "services.replay", 8003, "trajectory store"),
    ServiceEntry("rollout", "services.rollout", 8004, "rollout worker pool"),
    ServiceEntry("environments", "environments", 8010, "environment server (all envs)"),
)


def by_name(name: str) -> ServiceEntry:
    for entry in SERVICES:
        if entry.name == name:
            return entry
    known = ", ".join(e.name for e in SERVICES)
    raise KeyError(f"unknown service '{name}' (known: {known})")
