"""OpenAI-compatible routes: /v1/chat/completions, /v1/completions (streaming and not) and
/v1/models. Every choice also carries Slipstream's extras: `token_ids` (exactly what was
sampled), `policy_versions` (per token) and, top level, `prompt_token_ids` and
`policy_version`, so an OpenAI-speaking agent still yields trainable data."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from services.common.errors import BadRequest, NotFound
from services.common.wire import FinishReason, SamplingParams
from services.inference.detok import TextStream
from services.inference.schemas import (
    ChatCompletionRequest,
    CompletionRequest,
    ModelCard,
    ModelList,
    OpenAIRequestBase,
)
from services.inference.service import InferenceCore, apply_spans
from services.inference.toolcalls import parse_tool_calls, to_openai


@dataclass
class Completion:
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    finish: FinishReason = FinishReason.ABORT


def _core(request: Request) -> InferenceCore:
    return request.app.state.core  # type: ignore[no-any-return]


def _sampling(
    core: InferenceCore, body: OpenAIRequestBase, max_tokens: int | None
) -> SamplingParams:
    return SamplingParams(
        max_tokens=max_tokens or core.settings.default_max_tokens,
        temperature=body.temperature,
        top_p=body.top_p,
        top_k=body.top_k,
        stop=body.stop_list(),
        stop_token_ids=body.stop_token_ids or [],
        seed=body.seed,
    )


def _check_model(core: InferenceCore, name: str | None) -> None:
    if name and name not in {core.served_name, core.settings.model, core.model_path}:
        raise NotFound(f"model '{name}' is not served here (this serves '{core.served_name}')",
                       field="model")


async def _collect(
    core: InferenceCore, ids: list[int], sampling: SamplingParams, rid: str
) -> Completion:
    out = Completion()
    async for chunk in core.stream(ids, sampling, rid):
        out.token_ids += chunk.token_ids
        out.logprobs += chunk.logprobs
        out.versions += chunk.versions
        if chunk.version_spans:
            out.versions = apply_spans(out.versions, chunk.version_spans)
        if chunk.finish_reason is not None:
            out.finish = chunk.finish_reason
    return out


def _n_sampling(sampling: SamplingParams, i: int) -> SamplingParams:
    if sampling.seed is None or i == 0:
        return sampling
    return sampling.model_copy(update={"seed": sampling.seed + i})


# ------------------------------------------------------------------------ chat helpers


def _text_content(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def _template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for msg in messages:
        item = {**msg, "content": _text_content(msg.get("content"))}
        if msg.get("tool_calls"):
            item["tool_calls"] = [_template_call(c) for c in msg["tool_calls"]]
        out.append(item)
    return out


def _template_call(call: dict[str, Any]) -> dict[str, Any]:
    fn = dict(call.get("function") or call)
    args = fn.get("arguments")
    if isinstance(args, str):
        try:
            fn["arguments"] = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            fn["arguments"] = args
    return {"function": {"name": fn.get("name", ""), "arguments": fn.get("arguments", {})}}


def chat_prompt_ids(tokenizer: Any, body: ChatCompletionRequest) -> list[int]:
    try:
        text = tokenizer.apply_chat_template(
            _template_messages(body.messages),
            tools=body.tools or None,
            add_generation_prompt=True,
            tokenize=False,
        )
    except Exception as exc:  # a template error is the caller's bad input
        raise BadRequest(f"chat template failed: {exc}", field="messages") from exc
    return list(tokenizer.encode(text, add_special_tokens=False))


def _tools_on(body: ChatCompletionRequest) -> bool:
    return bool(body.tools) and body.tool_choice != "none"


def _message(text: str, tools_on: bool) -> tuple[dict[str, Any], str | None]:
    """The assistant message and, when tools parsed, 'tool_calls' as finish reason."""
    if not tools_on:
        return {"role": "assistant", "content": text}, None
    parsed = parse_tool_calls(text)
    message: dict[str, Any] = {"role": "assistant", "content": parsed.content or None}
    if parsed.tool_calls:
        message["tool_calls"] = [to_openai(c) for c in parsed.tool_calls]
        return message, "tool_calls"
    message["content"] = parsed.content
    if parsed.error:
        message["tool_call_error"] = parsed.error
    return message, None


def _chat_logprobs(tokenizer: Any, out: Completion) -> dict[str, Any]:
    tokens = tokenizer.convert_ids_to_tokens(out.token_ids)
    return {
        "content": [
            {"token": t, "logprob": lp, "bytes": list(t.encode()), "top_logprobs": []}
            for t, lp in zip(tokens, out.logprobs, strict=True)
        ]
    }


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def _sse(payload: dict[str, Any] | str) -> str:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {data}\n\n"


# ----------------------------------------------------------------------------- routes

router = APIRouter(tags=["openai"])


@router.get("/v1/models", response_model=ModelList)
async def list_models(request: Request) -> ModelList:
    core = _core(request)
    card = ModelCard(
        id=core.served_name,
        created=int(request.app.state.started_at),
        root=core.model_path,
        max_model_len=core.settings.engine.max_model_len,
        policy_version=core.version,
    )
    return ModelList(data=[card])


@router.post("/v1/chat/completions", response_model=None)
async def chat_completions(body: ChatCompletionRequest, request: Request) -> Any:
    core = _core(request)
    _check_model(core, body.model)
    engine = core.check_admission()
    ids = chat_prompt_ids(engine.tokenizer, body)
    sampling = _sampling(core, body, body.max_completion_tokens or body.max_tokens)
    rid = "chatcmpl-" + uuid.uuid4().hex
    if body.stream:
        if body.n != 1:
            raise BadRequest("stream with n > 1 is not supported", field="n")
        events = _chat_stream(core, engine.tokenizer, body, ids, sampling, rid)
        return StreamingResponse(events, media_type="text/event-stream")
    outs = await asyncio.gather(
        *(_collect(core, ids, _n_sampling(sampling, i), f"{rid}-{i}") for i in range(body.n))
    )
    choices = []
    for i, out in enumerate(outs):
        text = engine.tokenizer.decode(out.token_ids, skip_special_tokens=True)
        text = TextStream(engine.tokenizer, sampling.stop).cut(text)
        message, tool_finish = _message(text, _tools_on(body))
        choices.append({
            "index": i,
            "message": message,
            "finish_reason": tool_finish or out.finish.value,
            "logprobs": _chat_logprobs(engine.tokenizer, out) if body.logprobs else None,
            "token_ids": out.token_ids,
            "token_logprobs": out.logprobs,
            "policy_versions": out.versions,
        })
    return {
        "id": rid, "object": "chat.completion", "created": int(time.time()),
        "model": core.served_name, "choices": choices,
        "usage": _usage(len(ids), sum(len(o.token_ids) for o in outs)),
        "prompt_token_ids": ids, "policy_version": core.version,
    }


async def _chat_stream(
    core: InferenceCore, tokenizer: Any, body: ChatCompletionRequest,
    ids: list[int], sampling: SamplingParams, rid: str,
) -> AsyncIterator[str]:
    tools_on = _tools_on(body)
    text = TextStream(tokenizer, sampling.stop, hold_tools=tools_on)
    head = {"id": rid, "object": "chat.completion.chunk", "created": int(time.time()),
            "model": core.served_name}
    yield _sse({**head, "choices": [
        {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]})
    produced = 0
    async for chunk in core.stream(ids, sampling, rid):
        produced += len(chunk.token_ids)
        delta: dict[str, Any] = {}
        piece = text.feed(chunk.token_ids)
        finish = None
        if chunk.finish_reason is not None:
            delta, finish = _final_delta(text, piece, tools_on, chunk.finish_reason)
        elif piece:
            delta = {"content": piece}
        choice: dict[str, Any] = {
            "index": 0, "delta": delta, "finish_reason": finish,
            "token_ids": chunk.token_ids, "policy_versions": chunk.versions,
        }
        if body.logprobs:
            choice["logprobs"] = _chat_logprobs(
                tokenizer, Completion(chunk.token_ids, chunk.logprobs))
        yield _sse({**head, "choices": [choice], "policy_version": core.version})
    if (body.stream_options or {}).get("include_usage"):
        yield _sse({**head, "choices": [], "usage": _usage(len(ids), produced)})
    yield _sse("[DONE]")


def _final_delta(
    text: TextStream, piece: str, tools_on: bool, reason: FinishReason
) -> tuple[dict[str, Any], str]:
    held = text.rest()
    if not tools_on:
        return ({"content": piece + held} if piece + held else {}), reason.value
    parsed = parse_tool_calls(text.text)
    if parsed.tool_calls:
        calls = [{"index": i, **to_openai(c)} for i, c in enumerate(parsed.tool_calls)]
        return ({"content": piece, "tool_calls": calls} if piece else {"tool_calls": calls},
                "tool_calls")
    delta: dict[str, Any] = {"content": piece + held}
    if parsed.error:
        delta["tool_call_error"] = parsed.error
    return delta, reason.value


# ------------------------------------------------------------------------ completions


def _prompts(tokenizer: Any, prompt: Any) -> list[list[int]]:
    if isinstance(prompt, str):
        return [list(tokenizer.encode(prompt, add_special_tokens=False))]
    if prompt and all(isinstance(p, int) for p in prompt):
        return [list(prompt)]
    if prompt and all(isinstance(p, str) for p in prompt):
        return [list(tokenizer.encode(p, add_special_tokens=False)) for p in prompt]
    if prompt and all(isinstance(p, list) for p in prompt):
        return [list(p) for p in prompt]
    raise BadRequest("prompt must be a string, strings, token ids or lists of ids", field="prompt")


def _completion_logprobs(tokenizer: Any, out: Completion) -> dict[str, Any]:
    tokens = tokenizer.convert_ids_to_tokens(out.token_ids)
    offsets, pos = [], 0
    for tok_id in out.token_ids:
        offsets.append(pos)
        pos += len(tokenizer.decode([tok_id]))
    return {"tokens": tokens, "token_logprobs": out.logprobs, "top_logprobs": None,
            "text_offset": offsets}


@router.post("/v1/completions", response_model=None)
async def completions(body: CompletionRequest, request: Request) -> Any:
    core = _core(request)
    _check_model(core, body.model)
    engine = core.check_admission()
    tokenizer = engine.tokenizer
    prompts = _prompts(tokenizer, body.prompt)
    sampling = _sampling(core, body, body.max_tokens or 16)
    rid = "cmpl-" + uuid.uuid4().hex
    if body.stream:
        if body.n != 1 or len(prompts) != 1:
            raise BadRequest("stream supports one prompt and n = 1", field="stream")
        events = _completion_stream(core, tokenizer, body, prompts[0], sampling, rid)
        return StreamingResponse(events, media_type="text/event-stream")
    jobs = [(p, i) for p in prompts for i in range(body.n)]
    outs = await asyncio.gather(*(
        _collect(core, p, _n_sampling(sampling, i), f"{rid}-{k}") for k, (p, i) in enumerate(jobs)
    ))
    choices = []
    for k, ((prompt, _), out) in enumerate(zip(jobs, outs, strict=True)):
        text = TextStream(tokenizer, sampling.stop).cut(
            tokenizer.decode(out.token_ids, skip_special_tokens=True))
        if body.echo:
            text = tokenizer.decode(prompt, skip_special_tokens=True) + text
        choices.append({
            "index": k, "text": text, "finish_reason": out.finish.value,
            "logprobs": _completion_logprobs(tokenizer, out) if body.logprobs is not None else None,
            "token_ids": out.token_ids, "token_logprobs": out.logprobs,
            "policy_versions": out.versions, "prompt_token_ids": prompt,
        })
    return {
        "id": rid, "object": "text_completion", "created": int(time.time()),
        "model": core.served_name, "choices": choices,
        "usage": _usage(sum(len(p) for p, _ in jobs), sum(len(o.token_ids) for o in outs)),
        "policy_version": core.version,
    }


async def _completion_stream(
    core: InferenceCore, tokenizer: Any, body: CompletionRequest,
    ids: list[int], sampling: SamplingParams, rid: str,
) -> AsyncIterator[str]:
    text = TextStream(tokenizer, sampling.stop)
    head = {"id": rid, "object": "text_completion", "created": int(time.time()),
            "model": core.served_name}
    produced = 0
    async for chunk in core.stream(ids, sampling, rid):
        produced += len(chunk.token_ids)
        piece = text.feed(chunk.token_ids)
        finish = chunk.finish_reason.value if chunk.finish_reason is not None else None
        if finish:
            piece += text.rest()
        choice = {"index": 0, "text": piece, "finish_reason": finish, "logprobs": None,
                  "token_ids": chunk.token_ids, "token_logprobs": chunk.logprobs,
                  "policy_versions": chunk.versions}
        yield _sse({**head, "choices": [choice], "policy_version": core.version})
    if (body.stream_options or {}).get("include_usage"):
        yield _sse({**head, "choices": [], "usage": _usage(len(ids), produced)})
    yield _sse("[DONE]")
