"""Behaviour-logprob consistency: the vLLM engine's per-token logprobs vs a transformers
forward pass over the same token ids, in fp32 and bf16 (max and mean absolute difference).

The reference is always transformers in fp32 on the *same* weights the engine serves (bf16
weights upcast), so the bf16 figure measures what bf16 inference costs the learner's
importance ratios.

    .venv/bin/python bench/inference_logprobs.py [--model tiny-random] [--dtypes float32 bfloat16]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


async def engine_samples(model_path: str, dtype: str, prompt: list[int], n: int,
                         max_tokens: int) -> list[tuple[list[int], list[float]]]:
    from services.common.wire import SamplingParams
    from services.inference.engines.vllm_engine import VllmEngine
    from services.inference.settings import VllmEngineSettings

    engine = VllmEngine(VllmEngineSettings(dtype=dtype, max_model_len=1024), model_path, 0)
    await engine.start()
    try:
        async def one(seed: int) -> tuple[list[int], list[float]]:
            ids: list[int] = []
            lps: list[float] = []
            params = SamplingParams(max_tokens=max_tokens, temperature=1.0, seed=seed)
            async for chunk in engine.generate(prompt, params, f"s{seed}"):
                ids += chunk.token_ids
                lps += chunk.logprobs
            return ids, lps

        return list(await asyncio.gather(*(one(s) for s in range(n))))
    finally:
        await engine.shutdown()


def reference(model_path: str, dtype: str, prompt: list[int],
              samples: list[tuple[list[int], list[float]]]) -> list[float]:
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32).eval()
    if dtype == "bfloat16":  # the engine serves bf16-rounded weights: compare on those
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(p.to(torch.bfloat16).float())
    diffs = []
    with torch.no_grad():
        for ids, lps in samples:
            logits = model(torch.tensor([prompt + ids])).logits[0]
            logp = torch.log_softmax(logits.float(), dim=-1)
            pos = torch.arange(len(prompt) - 1, len(prompt) + len(ids) - 1)
            ref = logp[pos, torch.tensor(ids)]
            diffs += (ref - torch.tensor(lps)).abs().tolist()
    return diffs


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="tiny-random")
    parser.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16"])
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=64)
    args = parser.parse_args()

    from transformers import AutoTokenizer

    from services.inference.models import resolve_model

    model_path = resolve_model(args.model)
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    text = tokenizer.apply_chat_template([{"role": "user", "content": "Tell me a story."}],
                                         add_generation_prompt=True, tokenize=False)
    prompt = tokenizer.encode(text, add_special_tokens=False)
    rows = []
    for dtype in args.dtypes:
        samples = await engine_samples(model_path, dtype, prompt, args.samples, args.max_tokens)
        diffs = reference(model_path, dtype, prompt, samples)
        rows.append(f"{args.model:<24} {dtype:<9} tokens {len(diffs):5d}  "
                    f"max |diff| {max(diffs):.3e}  mean |diff| {sum(diffs) / len(diffs):.3e}")
    print("vLLM behaviour logprobs vs transformers fp32 forward on the same ids:")
    print("\n".join(rows))


if __name__ == "__main__":
    asyncio.run(main())
