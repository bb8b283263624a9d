"""Prometheus metrics with one registry per app (no module-level collectors, so tests and
several apps in one process never collide)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from fastapi import FastAPI, Request, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

LATENCY_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class Metrics:
    """A registry plus factories that prefix every metric with `slipstream_<service>_`."""

    def __init__(self, service: str) -> None:
        self.service = service
        self.registry = CollectorRegistry()
        self.prefix = f"slipstream_{service}_"
        self.http_requests = self.counter(
            "http_requests_total", "HTTP requests served.", ["method", "route", "status"]
        )
        self.http_latency = self.histogram(
            "http_request_seconds", "HTTP request latency.", ["method", "route"]
        )

    def counter(self, name: str, doc: str, labels: Sequence[str] = ()) -> Counter:
        return Counter(self.prefix + name, doc, list(labels), registry=self.registry)

    def gauge(self, name: str, doc: str, labels: Sequence[str] = ()) -> Gauge:
        return Gauge(self.prefix + name, doc, list(labels), registry=self.registry)

    def histogram(
        self,
        name: str,
        doc: str,
        labels: Sequence[str] = (),
        buckets: Sequence[float] = LATENCY_BUCKETS,
    ) -> Histogram:
        return Histogram(
            self.prefix + name, doc, list(labels), buckets=tuple(buckets), registry=self.registry
        )

    def render(self) -> Response:
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)

    def instrument(self, app: FastAPI) -> None:
        """Count and time every request by its route template (not the raw path, which
        would explode label cardinality with ids)."""

        @app.middleware("http")
        async def _observe(request: Request, call_next):  # type: ignore[no-untyped-def]
            start = time.perf_counter()
            status = 500
            try:
                response = await call_next(request)
                status = response.status_code
                return response
            finally:
                route = request.scope.get("route")
                template = getattr(route, "path", "unmatched")
                self.http_requests.labels(request.method, template, str(status)).inc()
                self.http_latency.labels(request.method, template).observe(
                    time.perf_counter() - start
                )
