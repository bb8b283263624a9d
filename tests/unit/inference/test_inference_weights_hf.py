"""Weight updates, pause/resume and back-pressure on the `hf` engine."""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import torch
from inference_helpers import hf_settings, serve
from safetensors.torch import load_file, save_file

PROMPT = [1, 4093, 198, 28120, 905, 2, 198, 1, 520, 9531, 198]


def perturbed_checkpoint(model: Path, out: Path, seed: int) -> Path:
    """What the learner publishes: a folder with only `model.safetensors`."""
    gen = torch.Generator().manual_seed(seed)
    state = load_file(str(model / "model.safetensors"))
    out.mkdir(parents=True, exist_ok=True)
    noisy = {k: v + 0.1 * torch.randn(v.shape, generator=gen) for k, v in state.items()}
    save_file(noisy, str(out / "model.safetensors"))
    return out


def greedy(url: str, max_tokens: int = 12) -> dict:
    body = {"prompt_token_ids": PROMPT, "sampling": {"max_tokens": max_tokens, "temperature": 0}}
    return httpx.post(url + "/v1/generate", json=body, timeout=120).json()


def metric(url: str, name: str) -> float:
    for line in httpx.get(url + "/metrics").text.splitlines():
        if line.startswith(f"slipstream_inference_{name} "):
            return float(line.split()[1])
    raise KeyError(name)


@pytest.fixture()
def service(tiny_model_path: Path) -> Iterator[str]:
    with serve(hf_settings(tiny_model_path, max_batch_size=4)) as url:
        yield url


def test_update_changes_greedy_output_and_is_reported(
    service: str, tiny_model_path: Path, tmp_path: Path
) -> None:
    before = greedy(service)
    ckpt = perturbed_checkpoint(tiny_model_path, tmp_path / "v1", seed=1)
    result = httpx.post(service + "/v1/weights", json={"version": 1, "path": str(ckpt)},
                        timeout=120).json()
    assert result["loaded"] and result["version"] == 1 and result["error"] is None
    after = greedy(service)
    assert after["token_ids"] != before["token_ids"]
    assert set(after["policy_versions"]) == {1}
    models = httpx.get(service + "/v1/models").json()
    assert models["data"][0]["policy_version"] == 1
    assert metric(service, "policy_version") == 1
    assert metric(service, "last_weight_load_seconds") > 0
    assert 'slipstream_inference_weight_loads_total{result="ok"} 1.0' in httpx.get(
        service + "/metrics").text


def test_bad_checkpoints_keep_the_old_version(
    service: str, tiny_model_path: Path, tmp_path: Path
) -> None:
    before = greedy(service)
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "model.safetensors").write_bytes(b"not a checkpoint")
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    save_file({"model.embed_tokens.weight": torch.zeros(3, 3)}, str(wrong / "model.safetensors"))
    for path, why in [(garbage, "not a readable"), (wrong, "missing"),
                      (tmp_path / "absent", "does not exist")]:
        result = httpx.post(service + "/v1/weights", json={"version": 5, "path": str(path)},
                            timeout=60).json()
        assert not result["loaded"] and result["version"] == 0 and why in result["error"]
    assert greedy(service)["token_ids"] == before["token_ids"]
    assert metric(service, "policy_version") == 0


def test_in_flight_request_survives_an_update(
    service: str, tiny_model_path: Path, tmp_path: Path
) -> None:
    ckpt = perturbed_checkpoint(tiny_model_path, tmp_path / "v1", seed=2)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        long = pool.submit(greedy, service, 600)
        deadline = time.monotonic() + 30
        while metric(service, "requests_running") < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        result = httpx.post(service + "/v1/weights", json={"version": 1, "path": str(ckpt)},
                            timeout=60).json()
        response = long.result(timeout=120)
    assert result["loaded"]
    versions = response["policy_versions"]
    assert response["finish_reason"] in ("length", "stop")
    assert versions[0] == 0 and versions[-1] == 1, "the update did not land mid-request"
    switch = versions.index(1)
    assert set(versions[:switch]) == {0} and set(versions[switch:]) == {1}


def test_pause_holds_requests_until_resume(service: str) -> None:
    assert httpx.post(service + "/v1/pause").json()["paused"]
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pending = pool.submit(greedy, service, 4)
        time.sleep(0.5)
        assert not pending.done()
        assert httpx.get(service + "/v1/status").json()["paused"]
        httpx.post(service + "/v1/resume")
        assert len(pending.result(timeout=60)["token_ids"]) >= 1


def test_admission_is_bounded(tiny_model_path: Path) -> None:
    settings = hf_settings(tiny_model_path)
    settings.max_pending_requests = 1
    with serve(settings) as url:
        httpx.post(url + "/v1/pause")
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pending = pool.submit(greedy, url, 2)
            time.sleep(0.3)
            refused = httpx.post(url + "/v1/generate",
                                 json={"prompt_token_ids": [1], "sampling": {"max_tokens": 1}})
            assert refused.status_code == 429 and refused.json()["error"] == "overloaded"
            httpx.post(url + "/v1/resume")
            pending.result(timeout=60)
