"""Weight publication over HTTP: ask every inference replica (or the router) to load a
published safetensors checkpoint, in parallel, each call with a timeout. A replica that
fails is logged and counted; training goes on (it catches up at the next version)."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import httpx

from services.common.jobspec import Endpoints
from services.common.wire import WeightUpdate, WeightUpdateResult

log = logging.getLogger(__name__)


def inference_targets(endpoints: Endpoints) -> list[str]:
    """Every replica when listed, else the router/replica at `endpoints.inference`."""
    return list(endpoints.inference_replicas) or [endpoints.inference]


def _post(url: str, update: WeightUpdate, timeout_s: float) -> tuple[str, bool, str | None]:
    try:
        response = httpx.post(
            url.rstrip("/") + "/v1/weights",
            json=update.model_dump(mode="json"),
            timeout=httpx.Timeout(timeout_s, connect=min(5.0, timeout_s)),
        )
        response.raise_for_status()
        try:
            result = WeightUpdateResult.model_validate(response.json())
        except ValueError:
            return url, True, None
        return url, result.loaded, result.error
    except httpx.HTTPError as exc:
        return url, False, f"{type(exc).__name__}: {exc}"


def notify_inference(urls: list[str], update: WeightUpdate, timeout_s: float) -> dict[str, bool]:
    """POST `update` to {url}/v1/weights for every url; {url: loaded}."""
    if not urls:
        return {}
    with ThreadPoolExecutor(max_workers=min(len(urls), 16)) as pool:
        results = list(pool.map(lambda u: _post(u, update, timeout_s), urls))
    out = {}
    for url, ok, error in results:
        out[url] = ok
        if not ok:
            log.warning("replica %s did not load v%d: %s", url, update.version, error)
    return out
