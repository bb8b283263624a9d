"""Rollout metrics (Prometheus), shared by every worker of one process."""

from __future__ import annotations

from services.common.metrics import Metrics

WAIT_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300)


class RolloutMetrics:
    def __init__(self, metrics: Metrics | None = None) -> None:
        m = metrics or Metrics("rollout")
        self.registry = m
        self.episodes = m.counter("episodes_total", "Finished episodes.", ["job", "status"])
        self.failures = m.counter("episode_failures_total", "Failed episodes.", ["job", "kind"])
        self.tokens = m.counter("tokens_total", "Tokens produced.", ["job", "kind"])
        self.groups = m.counter("groups_pushed_total", "Complete groups pushed to replay.", ["job"])
        self.admission_wait = m.histogram(
            "admission_wait_seconds",
            "Time a worker waited for admission of a group.",
            ["job"],
            buckets=WAIT_BUCKETS,
        )
        self.refusals = m.counter(
            "admission_refusals_total", "Admission requests refused (staleness bound).", ["job"]
        )
        self.in_flight = m.gauge("episodes_in_flight", "Episodes running now.", ["job"])
        self.version = m.gauge("policy_version", "Latest policy version seen.", ["job"])
        self.episode_seconds = m.histogram(
            "episode_seconds", "Episode wall time.", ["job"], buckets=WAIT_BUCKETS
        )
