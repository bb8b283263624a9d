"""Environment server under concurrent load: sessions/s and step latency p50/p99 per env.

Starts `python -m environments` in its own process (real data, real HTTP), then per
environment runs `--episodes` scripted episodes with `--concurrency` of them open at once
(each: reset, a few realistic tool calls, the final tool, close), and prints a table.

    .venv/bin/python bench/env_load.py --concurrency 200 --episodes 1000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import httpx

from environments.client import AsyncEnvironmentsClient
from services.common.wire import SessionCreate, SessionInfo, StepResult, ToolCall


class RawClient:
    """A lean aiohttp load generator with the typed client's three session calls, so the
    client's own CPU (httpx + retries) does not cap what the server is measured at."""

    def __init__(self, url: str, connections: int) -> None:
        import aiohttp

        self.url = url
        self.http = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=connections),
            timeout=aiohttp.ClientTimeout(total=60),
        )

    async def _post(self, path: str, body: dict) -> dict:
        async with self.http.post(self.url + path, json=body) as response:
            response.raise_for_status()
            return await response.json()

    async def create_session(self, request: SessionCreate) -> SessionInfo:
        return SessionInfo.model_validate(await self._post("/v1/sessions", request.model_dump()))

    async def step(self, sid: str, call: ToolCall) -> StepResult:
        body = {"tool_call": call.model_dump()}
        return StepResult.model_validate(await self._post(f"/v1/sessions/{sid}/step", body))

    async def close_session(self, sid: str) -> None:
        async with self.http.delete(f"{self.url}/v1/sessions/{sid}") as response:
            response.raise_for_status()

    async def __aenter__(self) -> RawClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.close()


Client = AsyncEnvironmentsClient | RawClient
Script = Callable[[Client, SessionInfo], Awaitable[list[float]]]


@dataclass
class Stats:
    resets: list[float] = field(default_factory=list)
    steps: list[float] = field(default_factory=list)
    errors: int = 0
    rejected: int = 0
    server_cpu_s: float = 0.0
    client_cpu_s: float = 0.0


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def timed_step(c: Client, sid: str, name: str, **args: object) -> tuple:
    started = time.perf_counter()
    result = await c.step(sid, ToolCall(name=name, arguments=args))
    return time.perf_counter() - started, result


async def arithmetic(c: Client, info: SessionInfo) -> list[float]:
    expr = info.observation.removeprefix("What is ").removesuffix("?")
    t1, r = await timed_step(c, info.session_id, "calculate", expression=expr)
    t2, _ = await timed_step(c, info.session_id, "answer", value=r.observation)
    return [t1, t2]


async def search(c: Client, info: SessionInfo) -> list[float]:
    t1, r = await timed_step(c, info.session_id, "search", query=info.observation, k=5)
    doc = r.observation.split("[", 1)[1].split("]", 1)[0] if "[" in r.observation else "Earth"
    t2, _ = await timed_step(c, info.session_id, "open", doc_id=doc)
    t3, _ = await timed_step(c, info.session_id, "answer", answer="1900")
    return [t1, t2, t3]


async def sql(c: Client, info: SessionInfo) -> list[float]:
    sid = info.session_id
    t1, r = await timed_step(c, sid, "list_tables")
    table = r.observation.split(" ", 1)[0]
    t2, _ = await timed_step(c, sid, "describe", table=table)
    t3, _ = await timed_step(c, sid, "execute_sql", query=f'SELECT COUNT(*) FROM "{table}"')
    t4, _ = await timed_step(c, sid, "submit", query=f'SELECT * FROM "{table}" LIMIT 5')
    return [t1, t2, t3, t4]


SCRIPTS: dict[str, Script] = {"arithmetic": arithmetic, "search": search, "sql": sql}


async def episode(c: Client, env: str, seed: int, stats: Stats) -> None:
    started = time.perf_counter()
    try:
        info = await c.create_session(SessionCreate(env=env, seed=seed))
    except Exception:
        stats.rejected += 1
        return
    stats.resets.append(time.perf_counter() - started)
    try:
        stats.steps += await SCRIPTS[env](c, info)
    except Exception:
        stats.errors += 1
    finally:
        await c.close_session(info.session_id)


def make_client(kind: str, url: str, connections: int) -> Client:
    if kind == "raw":
        return RawClient(url, connections)
    timeout = httpx.Timeout(60.0, connect=10.0)
    return AsyncEnvironmentsClient(url, timeout=timeout, retries=3, max_connections=connections)


async def run_env(
    url: str, env: str, episodes: int, concurrency: int, connections: int, kind: str, pid: int
) -> tuple[Stats, float]:
    stats = Stats()
    gate = asyncio.Semaphore(concurrency)
    async with make_client(kind, url, connections) as c:

        async def one(i: int) -> None:
            async with gate:
                await episode(c, env, i, stats)

        await asyncio.gather(*[one(i) for i in range(min(concurrency, episodes))])  # warm-up
        stats = Stats()
        server0, client0 = process_cpu_s(pid), sum(os.times()[:2])
        started = time.perf_counter()
        await asyncio.gather(*[one(i) for i in range(episodes)])
        wall = time.perf_counter() - started
        stats.server_cpu_s = process_cpu_s(pid) - server0
        stats.client_cpu_s = sum(os.times()[:2]) - client0
        return stats, wall


def pct(values: list[float], q: int) -> float:
    """The q-th percentile in milliseconds (nearest rank)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))] * 1000


def server_quantiles(url: str, env: str, qs: tuple[float, ...] = (0.5, 0.99)) -> list[float]:
    """Quantiles (ms) of the server's own tool-call latency histogram for `env` (thread
    queue + tool time, no HTTP), interpolated within Prometheus buckets."""
    prefix = f'slipstream_environments_step_seconds_bucket{{env="{env}",le="'
    buckets = []
    for line in httpx.get(f"{url}/metrics", timeout=10).text.splitlines():
        if line.startswith(prefix):
            le = line[len(prefix) :].split('"', 1)[0]
            buckets.append((float(le), float(line.rsplit(" ", 1)[1])))
    if not buckets or buckets[-1][1] == 0:
        return [float("nan") for _ in qs]
    total, out = buckets[-1][1], []
    for q in qs:
        lo_bound, lo_count = 0.0, 0.0
        for bound, count in buckets:
            if count >= q * total:
                span = count - lo_count
                frac = (q * total - lo_count) / span if span else 1.0
                out.append((lo_bound + frac * (min(bound, 60.0) - lo_bound)) * 1000)
                break
            lo_bound, lo_count = bound, count
    return out


def start_server(envs: list[str], port: int, threads: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.update(
        {
            "SLIPSTREAM_ENVIRONMENTS_ENVS": json.dumps(envs),
            "SLIPSTREAM_ENVIRONMENTS_MAX_SESSIONS": "2000",
            "SLIPSTREAM_ENVIRONMENTS_TOOL_THREADS": str(threads),
            "SLIPSTREAM_ENVIRONMENTS_LOG_LEVEL": "WARNING",
            "SLIPSTREAM_ENVIRONMENTS_MCP": "false",
        }
    )
    fd, log_path = tempfile.mkstemp(prefix="env-bench-", suffix=".log")
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "environments", "--port", str(port)],
            env=env,
            stdout=fd,
            stderr=subprocess.STDOUT,
        )
    finally:
        os.close(fd)  # the child keeps its copy
        print(f"server log: {log_path}")


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 180) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < timeout_s:
        if proc.poll() is not None:
            raise RuntimeError("the environment server exited during start-up")
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return time.perf_counter() - started
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError("the environment server did not become ready")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", default="arithmetic,search,sql")
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=32, help="server tool threads")
    parser.add_argument("--connections", type=int, default=64, help="client HTTP connections")
    parser.add_argument(
        "--client",
        choices=["raw", "typed"],
        default="raw",
        help="raw: lean aiohttp load generator (default); typed: environments.client "
        "(httpx + retries, what rollout workers use; its CPU cost shows in the figures)",
    )
    args = parser.parse_args()
    print(
        "step = a tool call as the client sees it; srv = the server's own tool-call time "
        "(thread queue + tool, from its Prometheus histogram, bucket-interpolated); "
        "cpu/ep = CPU time per episode of the server and of this load generator"
    )
    envs = args.envs.split(",")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    proc = start_server(envs, port, args.threads)
    try:
        ready = wait_ready(url, proc)
        print(
            f"server ready in {ready:.1f}s (envs {', '.join(envs)}; {os.cpu_count()} CPUs; "
            f"{args.concurrency} concurrent sessions over {args.connections} connections, "
            f"{args.episodes} episodes per env)"
        )
        header = (
            f"{'env':<11}{'sessions/s':>11}{'steps/s':>9}{'reset p50':>11}"
            f"{'reset p99':>11}{'step p50':>10}{'step p99':>10}{'srv p50':>9}{'srv p99':>9}"
            f"{'errors':>8}{'429':>6}{'srv cpu/ep':>12}{'cli cpu/ep':>12}"
        )
        print(header)
        print("-" * len(header))
        for env in envs:
            stats, wall = asyncio.run(
                run_env(
                    url,
                    env,
                    args.episodes,
                    args.concurrency,
                    args.connections,
                    args.client,
                    proc.pid,
                )
            )
            srv = server_quantiles(url, env)
            n = max(1, len(stats.resets))
            print(
                f"{env:<11}{len(stats.resets) / wall:>11.1f}{len(stats.steps) / wall:>9.1f}"
                f"{pct(stats.resets, 50):>9.1f}ms{pct(stats.resets, 99):>9.1f}ms"
                f"{pct(stats.steps, 50):>8.1f}ms{pct(stats.steps, 99):>8.1f}ms"
                f"{srv[0]:>7.1f}ms{srv[1]:>7.1f}ms{stats.errors:>8}{stats.rejected:>6}"
                f"{stats.server_cpu_s / n * 1000:>10.1f}ms{stats.client_cpu_s / n * 1000:>10.1f}ms"
            )
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


if __name__ == "__main__":
    main()
