"""Tokens/s through the inference service vs the bare vLLM engine, same prompts, same run.

Phase 1 runs vLLM's AsyncLLM directly (the same engine arguments the service uses);
phase 2 starts `python -m services.inference` with that engine and sends the same prompts
to `/v1/generate` over HTTP with the same concurrency. Greedy decoding, so both phases
produce the same tokens. One engine at a time (2-core machines).

    .venv/bin/python bench/inference_throughput.py [--model smollm2-135m-instruct]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUESTIONS = [
    "What is the capital of France?", "Explain photosynthesis briefly.",
    "Write a haiku about the sea.", "What is 17 times 23?", "Name three primary colors.",
    "How do airplanes fly?", "Give me a tip for learning Python.", "What is a prime number?",
    "Describe a cat in one sentence.", "Why is the sky blue?", "What does a compiler do?",
    "Suggest a name for a bakery.", "How many legs does a spider have?",
    "What is the boiling point of water?", "Summarize the plot of Cinderella.",
    "What is machine learning?",
]


def prompts(tokenizer, n: int) -> list[list[int]]:
    out = []
    for i in range(n):
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": QUESTIONS[i % len(QUESTIONS)] + " " * (i // 16)}],
            add_generation_prompt=True, tokenize=False)
        out.append(tokenizer.encode(text, add_special_tokens=False))
    return out


async def bare_engine(settings, model_path: str, batch: list[list[int]], max_tokens: int,
                      concurrency: int, rounds: int) -> list[tuple[int, float]]:
    from vllm import AsyncEngineArgs
    from vllm import SamplingParams as VSP
    from vllm.inputs import TokensPrompt
    from vllm.sampling_params import RequestOutputKind
    from vllm.v1.engine.async_llm import AsyncLLM

    from services.inference.engines.vllm_engine import VllmEngine

    args = VllmEngine(settings, model_path, 0)._engine_args(AsyncEngineArgs)
    llm = AsyncLLM.from_engine_args(args)
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int, ids: list[int]) -> int:
        params = VSP(temperature=0, max_tokens=max_tokens, logprobs=0, detokenize=False,
                     output_kind=RequestOutputKind.DELTA)
        n = 0
        async with gate:
            async for out in llm.generate(TokensPrompt(prompt_token_ids=ids), params, f"b{i}"):
                n += len(out.outputs[0].token_ids)
        return n

    try:
        await asyncio.gather(*(one(-i - 1, ids) for i, ids in enumerate(batch[:4])))  # warm-up
        results = []
        for r in range(rounds):
            start = time.perf_counter()
            jobs = (one(r * len(batch) + i, ids) for i, ids in enumerate(batch))
            tokens = sum(await asyncio.gather(*jobs))
            results.append((tokens, time.perf_counter() - start))
        return results
    finally:
        llm.shutdown()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_service(model_path: str, dtype: str, port: int, log: Path) -> subprocess.Popen:
    env = {**os.environ, "SLIPSTREAM_INFERENCE_MODEL": model_path,
           "SLIPSTREAM_INFERENCE_ENGINE__TYPE": "vllm",
           "SLIPSTREAM_INFERENCE_ENGINE__DTYPE": dtype,
           "SLIPSTREAM_INFERENCE_ENGINE__MAX_MODEL_LEN": "2048",
           "SLIPSTREAM_INFERENCE_LOG_LEVEL": "WARNING"}
    with log.open("wb") as out:
        return subprocess.Popen([sys.executable, "-m", "services.inference", "--port", str(port)],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


async def wait_ready(url: str, proc: subprocess.Popen, timeout: float = 600) -> float:
    start = time.perf_counter()
    async with httpx.AsyncClient() as http:
        while time.perf_counter() - start < timeout:
            if proc.poll() is not None:
                raise RuntimeError(f"service exited with {proc.returncode}")
            try:
                if (await http.get(url + "/readyz", timeout=2)).status_code == 200:
                    return time.perf_counter() - start
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.5)
    raise TimeoutError(url)


async def through_service(url: str, batch: list[list[int]], max_tokens: int,
                          concurrency: int, rounds: int) -> list[tuple[int, float]]:
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(timeout=600) as http:
        async def one(ids: list[int]) -> int:
            body = {"prompt_token_ids": ids,
                    "sampling": {"max_tokens": max_tokens, "temperature": 0}}
            async with gate:
                response = await http.post(url + "/v1/generate", json=body)
            response.raise_for_status()
            return len(response.json()["token_ids"])

        await asyncio.gather(*(one(ids) for ids in batch[:4]))  # warm-up
        results = []
        for _ in range(rounds):
            start = time.perf_counter()
            tokens = sum(await asyncio.gather(*(one(ids) for ids in batch)))
            results.append((tokens, time.perf_counter() - start))
        return results


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per phase")
    args = parser.parse_args()

    from transformers import AutoTokenizer

    from services.inference.models import resolve_model
    from services.inference.settings import VllmEngineSettings

    model_path = resolve_model(args.model)
    batch = prompts(AutoTokenizer.from_pretrained(model_path), args.prompts)
    settings = VllmEngineSettings(dtype=args.dtype, max_model_len=2048)

    bare = await bare_engine(settings, model_path, batch, args.max_tokens, args.concurrency,
                             args.rounds)
    port = free_port()
    proc = start_service(model_path, args.dtype, port, Path("/tmp/bench_inference_service.log"))
    try:
        await wait_ready(f"http://127.0.0.1:{port}", proc)
        svc = await through_service(f"http://127.0.0.1:{port}", batch, args.max_tokens,
                                    args.concurrency, args.rounds)
    finally:
        proc.terminate()
        proc.wait(30)
    print(f"model {args.model} ({args.dtype}), {args.prompts} prompts, "
          f"max_tokens {args.max_tokens}, concurrency {args.concurrency}, {os.cpu_count()} CPUs, "
          f"{args.rounds} rounds per phase")
    bare_rate = report("bare vLLM engine", bare)
    svc_rate = report("through service", svc)
    print(f"service / engine : {svc_rate / bare_rate:.3f} (medians)")


def report(name: str, rounds: list[tuple[int, float]]) -> float:
    rates = sorted(tokens / seconds for tokens, seconds in rounds)
    median = rates[len(rates) // 2]
    print(f"{name:<17}: {rounds[0][0]:6d} tokens/round, tok/s per round "
          f"{', '.join(f'{r:.1f}' for r in rates)}; median {median:.1f}")
    return median


if __name__ == "__main__":
    asyncio.run(main())
