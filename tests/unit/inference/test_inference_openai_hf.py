"""The service on the `hf` engine, driven by the official `openai` client over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import httpx
import openai
import pytest
import torch
from inference_helpers import hf_settings, serve

from services.inference import service as service_module
from services.inference.engines.hf_engine import HfEngine, _Seq

TOOLS = [{
    "type": "function",
    "function": {
        "name": "calculator",
        "description": "Evaluate an arithmetic expression.",
        "parameters": {"type": "object", "properties": {"expr": {"type": "string"}},
                       "required": ["expr"]},
    },
}]


@pytest.fixture(scope="module")
def client(hf_service: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=hf_service + "/v1", api_key="unused", max_retries=0)


def test_chat_returns_text_tokens_logprobs_and_versions(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(
        model="tiny", messages=[{"role": "user", "content": "2+2?"}],
        max_tokens=8, temperature=0, logprobs=True,
    )
    choice = reply.choices[0]
    extra = choice.model_extra or {}
    assert choice.finish_reason in ("stop", "length")
    assert len(extra["token_ids"]) == len(extra["policy_versions"]) == len(choice.logprobs.content)
    assert all(v == 0 for v in extra["policy_versions"])
    assert all(lp.logprob <= 0 for lp in choice.logprobs.content)
    assert reply.usage is not None and reply.usage.prompt_tokens == len(
        (reply.model_extra or {})["prompt_token_ids"])
    assert reply.usage.completion_tokens == len(extra["token_ids"])


def test_streaming_chat_matches_the_non_streaming_greedy_answer(client: openai.OpenAI) -> None:
    messages = [{"role": "user", "content": "Say something."}]
    whole = client.chat.completions.create(
        model="tiny", messages=messages, max_tokens=12, temperature=0)
    stream = client.chat.completions.create(
        model="tiny", messages=messages, max_tokens=12, temperature=0, stream=True,
        stream_options={"include_usage": True})
    pieces, token_ids, finish, usage = [], [], None, None
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        if not chunk.choices:
            continue
        pieces.append(chunk.choices[0].delta.content or "")
        token_ids += (chunk.choices[0].model_extra or {}).get("token_ids", [])
        finish = chunk.choices[0].finish_reason or finish
    assert "".join(pieces) == whole.choices[0].message.content
    assert token_ids == (whole.choices[0].model_extra or {})["token_ids"]
    assert finish == whole.choices[0].finish_reason
    assert usage is not None and usage.completion_tokens == len(token_ids)


def test_completions_accept_text_and_token_ids(client: openai.OpenAI) -> None:
    by_text = client.completions.create(model="tiny", prompt="Hello", max_tokens=5,
                                        temperature=0, logprobs=0)
    ids = (by_text.choices[0].model_extra or {})["prompt_token_ids"]
    by_ids = client.completions.create(model="tiny", prompt=ids, max_tokens=5, temperature=0)
    assert by_ids.choices[0].text == by_text.choices[0].text
    assert len(by_text.choices[0].logprobs.token_logprobs) == len(
        (by_text.choices[0].model_extra or {})["token_ids"])
    streamed = "".join(
        c.choices[0].text for c in client.completions.create(
            model="tiny", prompt="Hello", max_tokens=5, temperature=0, stream=True) if c.choices)
    assert streamed == by_text.choices[0].text


def test_models_reports_policy_version(client: openai.OpenAI) -> None:
    card = client.models.list().data[0]
    assert card.id == "tiny" and (card.model_extra or {})["policy_version"] == 0


def test_unknown_model_and_bad_prompt_are_typed_errors(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="gpt-9", messages=[{"role": "user", "content": "x"}])
    with pytest.raises(openai.BadRequestError):
        client.completions.create(model="tiny", prompt=list(range(2000)), max_tokens=2)


def test_token_route_and_seeded_sampling(hf_service: str) -> None:
    body = {"prompt_token_ids": [1, 4093, 198, 6004], "episode_id": "ep-1",
            "sampling": {"max_tokens": 6, "temperature": 1.0, "seed": 7}}
    first = httpx.post(hf_service + "/v1/generate", json=body, timeout=60).json()
    second = httpx.post(hf_service + "/v1/generate", json=body, timeout=60).json()
    assert first["token_ids"] == second["token_ids"]
    assert len(first["token_ids"]) == len(first["logprobs"]) == len(first["policy_versions"])
    assert first["prompt_tokens"] == 4 and first["finish_reason"] in ("stop", "length")


def test_concurrent_requests_are_batched(hf_service: str) -> None:
    import concurrent.futures

    body = {"prompt_token_ids": [1, 2, 3], "sampling": {"max_tokens": 30, "temperature": 0}}
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(
            lambda _: httpx.post(hf_service + "/v1/generate", json=body, timeout=60).json(),
            range(8)))
    assert len({tuple(r["token_ids"]) for r in results}) == 1  # batching changes nothing
    metrics = httpx.get(hf_service + "/metrics").text
    assert "slipstream_inference_generated_tokens_total" in metrics


# ------------------------------------------------------------------ tool-call round trip


class ScriptedEngine(HfEngine):
    """The real tiny model runs, but the sampled tokens follow a script: a stand-in for a
    model that has learned to call tools (a random model never would)."""

    scripts: ClassVar[list[list[int]]] = []

    def _sample(self, seq: _Seq, logits: torch.Tensor) -> tuple[int, float]:
        if not hasattr(seq, "script"):
            seq.script = self.scripts.pop(0) if self.scripts else []  # type: ignore[attr-defined]
        script: list[int] = seq.script  # type: ignore[attr-defined]
        index = len(seq.output)
        token = script[index] if index < len(script) else next(iter(self.eos_token_ids))
        return token, float(torch.log_softmax(logits, -1)[token])


@pytest.fixture()
def scripted(tiny_model_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Any]]:
    def build(settings: Any, model_path: str, version: int) -> ScriptedEngine:
        return ScriptedEngine(settings, model_path, version)

    monkeypatch.setattr(service_module, "build_engine", build)
    with serve(hf_settings(tiny_model_path)) as url:
        from transformers import AutoTokenizer

        yield url, AutoTokenizer.from_pretrained(str(tiny_model_path))


def test_tool_call_round_trip(scripted: tuple[str, Any]) -> None:
    url, tokenizer = scripted
    call = '<tool_call>\n{"name": "calculator", "arguments": {"expr": "6*7"}}\n</tool_call>'
    ScriptedEngine.scripts[:] = [
        tokenizer.encode(call, add_special_tokens=False),
        tokenizer.encode("It is 42.", add_special_tokens=False),
    ]
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    messages: list[Any] = [{"role": "user", "content": "What is 6*7?"}]
    first = client.chat.completions.create(model="tiny", messages=messages, tools=TOOLS,
                                           max_tokens=64)
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    (tool_call,) = choice.message.tool_calls or []
    assert tool_call.function.name == "calculator"
    assert json.loads(tool_call.function.arguments) == {"expr": "6*7"}
    prompt_text = tokenizer.decode((first.model_extra or {})["prompt_token_ids"])
    assert '"name": "calculator"' in prompt_text and "<tools>" in prompt_text

    messages += [choice.message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": tool_call.id, "content": "42"}]
    second = client.chat.completions.create(model="tiny", messages=messages, tools=TOOLS,
                                            max_tokens=64)
    assert second.choices[0].message.content == "It is 42."
    assert second.choices[0].finish_reason == "stop"
    history = tokenizer.decode((second.model_extra or {})["prompt_token_ids"])
    assert "<tool_response>\n42\n</tool_response>" in history
    assert call in history


def test_streamed_tool_call_and_malformed_call(scripted: tuple[str, Any]) -> None:
    url, tokenizer = scripted
    good = 'Sure. <tool_call>{"name": "calculator", "arguments": {"expr": "1+1"}}</tool_call>'
    bad = '<tool_call>{"name": "calculator", "arguments": {oops}</tool_call>'
    ScriptedEngine.scripts[:] = [tokenizer.encode(t, add_special_tokens=False) for t in (good, bad)]
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    messages = [{"role": "user", "content": "1+1?"}]
    content, calls, finish = "", [], None
    for chunk in client.chat.completions.create(model="tiny", messages=messages, tools=TOOLS,
                                                max_tokens=64, stream=True):
        delta = chunk.choices[0].delta
        content += delta.content or ""
        calls += delta.tool_calls or []
        finish = chunk.choices[0].finish_reason or finish
    assert content.strip() == "Sure." and finish == "tool_calls"
    assert calls[0].function.name == "calculator"
    assert json.loads(calls[0].function.arguments or "") == {"expr": "1+1"}

    reply = client.chat.completions.create(model="tiny", messages=messages, tools=TOOLS,
                                           max_tokens=64)
    message = reply.choices[0].message
    assert message.tool_calls is None and message.content == bad
    assert "invalid JSON" in (message.model_extra or {})["tool_call_error"]


def test_left_padded_batches_match_solo_runs(hf_service: str) -> None:
    import concurrent.futures

    short = {"prompt_token_ids": [1, 4093, 198], "sampling": {"max_tokens": 10, "temperature": 0}}
    long = {"prompt_token_ids": list(range(100, 160)),
            "sampling": {"max_tokens": 10, "temperature": 0}}
    solo = httpx.post(hf_service + "/v1/generate", json=short, timeout=60).json()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        mixed = list(pool.map(
            lambda body: httpx.post(hf_service + "/v1/generate", json=body, timeout=60).json(),
            [long, short, long, short]))
    for result in (mixed[1], mixed[3]):
        assert result["token_ids"] == solo["token_ids"]
        assert max(abs(a - b) for a, b in zip(result["logprobs"], solo["logprobs"],
                                              strict=True)) < 1e-4
