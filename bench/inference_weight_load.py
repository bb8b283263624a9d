"""Time to load new weights into a running inference service (SmolLM2-135M by default).

Starts `python -m services.inference` (vLLM engine), writes learner-style checkpoints
(a folder with only `model.safetensors`, perturbed weights) and posts `/v1/weights` for
versions 1..N, idle and then with requests in flight. Prints the server-side load time
(pause, reload, relabel, resume) and the client's wall time per load.

    .venv/bin/python bench/inference_weight_load.py [--model smollm2-135m-instruct]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inference_throughput import free_port, start_service, wait_ready


def write_checkpoints(model_path: str, out: Path, n: int) -> list[Path]:
    import torch
    from safetensors.torch import load_file, save_file

    state = load_file(str(Path(model_path) / "model.safetensors"))
    paths = []
    for version in range(1, n + 1):
        gen = torch.Generator().manual_seed(version)
        folder = out / f"v{version}"
        folder.mkdir(parents=True)
        save_file({k: (v.float() + 1e-3 * torch.randn(v.shape, generator=gen)).to(v.dtype)
                   for k, v in state.items()}, str(folder / "model.safetensors"))
        paths.append(folder)
    return paths


async def load(http: httpx.AsyncClient, url: str, version: int, path: Path) -> tuple[float, float]:
    start = time.perf_counter()
    result = (await http.post(url + "/v1/weights",
                              json={"version": version, "path": str(path)})).json()
    wall = time.perf_counter() - start
    if not result["loaded"]:
        raise RuntimeError(result["error"])
    return result["load_seconds"], wall


async def busy(http: httpx.AsyncClient, url: str, stop: asyncio.Event) -> int:
    """Keep 4 requests in flight until `stop`; returns how many finished (none dropped)."""
    done = 0

    async def worker() -> None:
        nonlocal done
        while not stop.is_set():
            body = {"prompt_token_ids": [1, 4093, 198, 28120, 198],
                    "sampling": {"max_tokens": 48, "temperature": 1.0}}
            response = await http.post(url + "/v1/generate", json=body)
            response.raise_for_status()
            done += 1

    await asyncio.gather(*(worker() for _ in range(4)))
    return done


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--loads", type=int, default=4)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from services.inference.models import resolve_model

    model_path = resolve_model(args.model)
    with tempfile.TemporaryDirectory() as tmp:
        ckpts = write_checkpoints(model_path, Path(tmp), 2 * args.loads)
        size_mb = (ckpts[0] / "model.safetensors").stat().st_size / 1e6
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        proc = start_service(model_path, args.dtype, port, Path("/tmp/bench_weight_load.log"))
        try:
            startup = await wait_ready(url, proc)
            async with httpx.AsyncClient(timeout=600) as http:
                idle = [await load(http, url, v + 1, p) for v, p in enumerate(ckpts[:args.loads])]
                stop = asyncio.Event()
                traffic = asyncio.create_task(busy(http, url, stop))
                await asyncio.sleep(2)
                loaded = []
                for v, p in enumerate(ckpts[args.loads:], start=args.loads + 1):
                    loaded.append(await load(http, url, v, p))
                    await asyncio.sleep(0.5)
                stop.set()
                finished = await traffic
        finally:
            proc.terminate()
            proc.wait(30)

    def row(name: str, xs: list[tuple[float, float]]) -> str:
        server = [s for s, _ in xs]
        wall = [w for _, w in xs]
        return (f"{name:<22} server median {statistics.median(server):6.3f} s "
                f"(min {min(server):.3f}, max {max(server):.3f}); "
                f"client wall median {statistics.median(wall):6.3f} s")

    print(f"model {args.model} ({args.dtype}), checkpoint {size_mb:.0f} MB, "
          f"service start {startup:.1f} s, {os.cpu_count()} CPUs")
    print(row("idle loads", idle))
    print(row("loads under traffic", loaded))
    print(f"requests completed during loads: {finished} (none dropped)")


if __name__ == "__main__":
    asyncio.run(main())
