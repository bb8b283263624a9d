"""Learner metrics: staleness histogram, and a sink writing `MetricPoint` rows to
run_dir/metrics.jsonl and (best effort, with a timeout) to the control plane."""

from __future__ import annotations

import logging
import os
import threading
from collections import Counter
from pathlib import Path

import httpx

from services.common.wire import MetricPoint

log = logging.getLogger(__name__)


def staleness_histogram(staleness: list[int]) -> dict[str, float]:
    """`staleness/mean`, `staleness/max` and one `staleness/v{gap}` count per version gap
    (learner version at take time minus the oldest version that produced the sample)."""
    if not staleness:
        return {"staleness/mean": 0.0, "staleness/max": 0.0}
    counts = Counter(staleness)
    out = {f"staleness/v{gap}": float(n) for gap, n in sorted(counts.items())}
    out["staleness/mean"] = sum(staleness) / len(staleness)
    out["staleness/max"] = float(max(staleness))
    return out


class MetricsSink:
    """Append-only metrics: a local JSONL file (always) and the API (when configured)."""

    def __init__(
        self, run_dir: Path, job_id: str, api_url: str | None, timeout_s: float = 3.0
    ) -> None:
        self.path = Path(run_dir) / "metrics.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.job_id = job_id
        self.api_url = api_url.rstrip("/") if api_url else None
        self.timeout_s = timeout_s
        # The job runner hands every job process a token scoped to this job.
        token = os.environ.get("SLIPSTREAM_API_TOKEN")
        headers = {"Authorization": f"Bearer {token}"} if token else None
        self._http = httpx.Client(timeout=timeout_s, headers=headers) if self.api_url else None
        self._lock = threading.Lock()  # the evaluator thread records too
        self.api_failures = 0

    def record(self, step: int, values: dict[str, float], kind: str = "train") -> MetricPoint:
        point = MetricPoint(job_id=self.job_id, step=step, kind=kind, values=values)  # type: ignore[arg-type]
        with self._lock:
            with self.path.open("a") as f:
                f.write(point.model_dump_json() + "\n")
            self._post([point])
        return point

    def _post(self, points: list[MetricPoint]) -> None:
        if self._http is None:
            return
        url = f"{self.api_url}/v1/jobs/{self.job_id}/metrics"
        try:
            response = self._http.post(url, json=[p.model_dump(mode="json") for p in points])
            response.raise_for_status()
        except httpx.HTTPError as exc:
            self.api_failures += 1
            log.warning("metrics POST to %s failed (%s); kept in %s", url, exc, self.path)

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
