"""The router in front of two real replica processes (`hf` engine, tiny model)."""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from inference_ckpt import perturbed_checkpoint
from inference_procs import free_port, replicas, serve_app

from services.inference.router import RouterSettings, create_router_app

BODY = {"prompt_token_ids": [1, 4093, 198, 28120, 198],
        "sampling": {"max_tokens": 200, "temperature": 1.0}}


pytestmark = pytest.mark.slow  # two replica processes start (~20 s on 2 cores)


@contextlib.contextmanager
def _cluster(model: Path, logs: Path) -> Iterator[tuple[str, list]]:
    with replicas(model, 2, logs) as started:
        settings = RouterSettings(port=free_port(), replicas=[u for u, _ in started],
                                  health_interval_s=0.5)
        with serve_app(create_router_app(settings), settings.port) as url:
            yield url, started


@pytest.fixture(scope="module")
def cluster(tiny_model_path: Path, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[str, list]]:
    with _cluster(tiny_model_path, tmp_path_factory.mktemp("replicas")) as running:
        yield running


@pytest.fixture()
def doomed_cluster(tiny_model_path: Path, tmp_path: Path) -> Iterator[tuple[str, list]]:
    """A cluster of its own: the test kills its replicas."""
    with _cluster(tiny_model_path, tmp_path) as running:
        yield running


def generate(url: str, episode: str | None = None, **sampling: object) -> httpx.Response:
    body = {**BODY, "episode_id": episode,
            "sampling": {**BODY["sampling"], **sampling}}  # type: ignore[dict-item]
    return httpx.post(url + "/v1/generate", json=body, timeout=120)


def test_sticky_by_episode_and_least_outstanding(cluster: tuple[str, list]) -> None:
    url, started = cluster
    first = generate(url, "episode-a", max_tokens=2).json()["replica"]
    again = {generate(url, "episode-a", max_tokens=2).json()["replica"] for _ in range(4)}
    assert again == {first}
    # Without an episode, concurrent requests spread over both replicas.
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        spread = {r.json()["replica"] for r in pool.map(
            lambda _: generate(url, None, max_tokens=40), range(6))}
    assert spread == {u for u, _ in started}


def test_weights_fan_out_and_versions_are_tracked(
    cluster: tuple[str, list], tiny_model_path: Path, tmp_path: Path
) -> None:
    url, started = cluster
    ckpt = perturbed_checkpoint(tiny_model_path, tmp_path / "v3")
    result = httpx.post(url + "/v1/weights", json={"version": 3, "path": str(ckpt)},
                        timeout=120).json()
    assert result == {"version": 3, "loaded": True, "load_seconds": result["load_seconds"],
                      "error": None}
    for replica_url, _ in started:
        assert httpx.get(replica_url + "/v1/status").json()["version"] == 3
    time.sleep(1.2)  # a health round
    versions = [r["version"] for r in httpx.get(url + "/v1/replicas").json()["replicas"]]
    assert versions == [3, 3]
    assert set(generate(url, None, max_tokens=3).json()["policy_versions"]) == {3}
    paused = httpx.post(url + "/v1/pause").json()["replicas"]
    assert all(v["paused"] for v in paused.values())
    httpx.post(url + "/v1/resume")


def test_streaming_through_the_router(cluster: tuple[str, list]) -> None:
    import openai

    url, _ = cluster
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    chunks = list(client.chat.completions.create(
        model="tiny", messages=[{"role": "user", "content": "hi"}], max_tokens=5,
        temperature=0, stream=True))
    assert chunks[-1].choices[0].finish_reason in ("stop", "length")
    whole = client.chat.completions.create(
        model="tiny", messages=[{"role": "user", "content": "hi"}], max_tokens=5, temperature=0)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == (
        whole.choices[0].message.content)


def test_killing_a_replica_under_load_loses_no_request(doomed_cluster: tuple[str, list]) -> None:
    url, started = doomed_cluster
    victim_url, victim = started[0]
    with concurrent.futures.ThreadPoolExecutor(12) as pool:
        futures = [pool.submit(generate, url, f"ep-{i}") for i in range(12)]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # wait until the victim is busy
            state = httpx.get(url + "/v1/replicas").json()["replicas"]
            if next(r for r in state if r["url"] == victim_url)["outstanding"] > 0:
                break
            time.sleep(0.02)
        time.sleep(0.3)
        os.kill(victim.pid, signal.SIGKILL)
        responses = [f.result(timeout=120) for f in futures]
    assert [r.status_code for r in responses] == [200] * 12
    served_by = {r.json()["replica"] for r in responses}
    assert served_by == {started[1][0]}, "every answer must come from the survivor"
    assert all(len(r.json()["token_ids"]) >= 1 for r in responses)
    metrics = httpx.get(url + "/metrics").text
    assert "slipstream_inference_router_retries_total" in metrics
    state = httpx.get(url + "/v1/replicas").json()["replicas"]
    assert [r["healthy"] for r in state] == [False, True]
    # With both gone the router answers a clear error at once instead of hanging.
    os.kill(started[1][1].pid, signal.SIGKILL)
    started[1][1].wait(10)
    failed = generate(url, "ep-x", max_tokens=2)
    assert failed.status_code in (502, 503) and failed.json()["message"]
