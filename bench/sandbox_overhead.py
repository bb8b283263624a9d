"""Sandbox overhead: executions/s and per-execution latency (p50/p99) of the sandbox
(`environments.code.sandbox.Sandbox.run`) against a bare `python3 -c` run, side by side.

    .venv/bin/python bench/sandbox_overhead.py --runs 200 --concurrency 2

Latencies are taken interleaved (one bare run, one sandboxed run, ...), so background
load affects both alike; `os.getloadavg()` is printed, since figures on a busy machine are
not comparable with a quiet one. Both sides run the same trivial program with Debian's
/usr/bin/python3 (bare: `-E -s -B -c`, via subprocess, no limits, no isolation). Latency
is wall time per execution as the caller sees it; throughput runs `--concurrency`
executions at once.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from environments.code.models import Limits
from environments.code.sandbox import Sandbox
from environments.code.settings import SandboxSettings

PROGRAM = "print(sum(range(1000)))"


def bare(python: str) -> Callable[[], None]:
    def run() -> None:
        out = subprocess.run(
            [python, "-E", "-s", "-B", "-c", PROGRAM], capture_output=True, check=True
        )
        assert out.stdout == b"499500\n"

    return run


def sandboxed(box: Sandbox) -> Callable[[], None]:
    limits = Limits(wall_time_s=10, cpu_time_s=10)

    def run() -> None:
        result = box.run(PROGRAM, limits=limits)
        assert result.ok and result.stdout == "499500\n", result

    return run


def latencies(fn: Callable[[], None], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def throughput(fn: Callable[[], None], runs: int, concurrency: int) -> float:
    start = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(lambda _: fn(), range(runs)))
    return runs / (time.perf_counter() - start)


def pct(xs: list[float], q: float) -> float:
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="executions per measurement")
    parser.add_argument("--concurrency", type=int, default=2, help="parallel executions")
    args = parser.parse_args()
    box = Sandbox(SandboxSettings(slots=max(4, args.concurrency)))
    print(f"sandbox isolation level: {box.level.value} {box.describe()}")
    print(f"load average before: {os.getloadavg()}")
    sides = {"bare python3 -c": bare(box.settings.python), "sandbox": sandboxed(box)}
    for fn in sides.values():  # warm caches
        latencies(fn, 5)
    # latencies interleaved (bare, sandbox, bare, ...) so load drift hits both alike
    lat: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(args.runs):
        for name, fn in sides.items():
            lat[name] += latencies(fn, 1)
    rows = {}
    for name, fn in sides.items():
        rate = throughput(fn, args.runs, args.concurrency)
        rows[name] = (pct(lat[name], 0.5), pct(lat[name], 0.99), statistics.mean(lat[name]), rate)
    print(f"{'':18}{'p50 ms':>10}{'p99 ms':>10}{'mean ms':>10}{'exec/s':>10}")
    for name, (p50, p99, mean, rate) in rows.items():
        print(f"{name:18}{p50 * 1e3:10.1f}{p99 * 1e3:10.1f}{mean * 1e3:10.1f}{rate:10.1f}")
    (b50, b99, bmean, brate), (s50, s99, smean, srate) = rows.values()
    print(
        f"{'overhead':18}{(s50 - b50) * 1e3:+10.1f}{(s99 - b99) * 1e3:+10.1f}"
        f"{(smean - bmean) * 1e3:+10.1f}{srate / brate:9.2f}x"
    )
    print(
        f"ratio sandbox/bare: p50 {s50 / b50:.2f}x, p99 {s99 / b99:.2f}x, "
        f"throughput {srate / brate:.2f}x (concurrency {args.concurrency})"
    )


if __name__ == "__main__":
    main()
