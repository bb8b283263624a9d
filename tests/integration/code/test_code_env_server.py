"""The code environment through the environment server's HTTP API, with its real task set
and the real sandbox: a scripted agent (the reference solution vs wrong ones) shows the
reward separates right from wrong; `/v1/run_code`, `/readyz` and back-pressure."""

from __future__ import annotations

import asyncio
import statistics

import httpx

from environments.client import EnvironmentsClient
from services.common.wire import SessionCreate, ToolCall

WRONG = {
    "none": "def {entry}(*args):\n    return None\n",
    "crash": "def {entry}(*args):\n    raise RuntimeError('no idea')\n",
    "syntax": "def {entry}(*args) return 1\n",
    "hang": "def {entry}(*args):\n    while True:\n        pass\n",
    "forged_eq": (
        "class _Any:\n    def __eq__(self, other):\n        return True\n"
        "def {entry}(*args):\n    return _Any()\n"
    ),
}


def _episode(client: EnvironmentsClient, task_id: str, code: str, probe: bool) -> float:
    info = client.create_session(SessionCreate(env="code", task_id=task_id))
    entry = info.task.metadata["entry_point"]
    assert entry in info.observation and "def " in info.observation
    if probe:  # the agent tries its code first, as an LLM would
        ran = client.step(
            info.session_id,
            ToolCall(name="run_python", arguments={"code": code + f"\nprint({entry!r})"}),
        )
        assert ran.error is None and entry in ran.observation, ran.observation
    done = client.step(info.session_id, ToolCall(name="submit", arguments={"code": code}))
    assert done.done and done.info["final_answer"] == code
    assert done.info["isolation"].startswith("bwrap")
    assert done.reward is not None
    return done.reward


def test_scripted_agent_separates_right_from_wrong(code_server: str) -> None:
    from environments.registry import get_task_set

    client = EnvironmentsClient(code_server, retries=0, timeout=60)
    listing = client.list_tasks("code", split="eval", limit=1000)
    assert len(listing.tasks) >= 30
    by_family: dict[str, str] = {}
    for view in listing.tasks:
        by_family.setdefault(view.metadata["family"], view.task_id)
    sample = sorted(by_family.values())[:9]
    assert {"easy", "medium", "hard"} <= {
        v.difficulty for v in listing.tasks if v.task_id in sample
    }
    gold = get_task_set("code", "default", data_dir=_data_dir(client))
    right, wrong = [], []
    for i, task_id in enumerate(sample):
        task = gold.get(task_id)
        right.append(_episode(client, task_id, task.gold["reference"], probe=i < 3))
        kind = list(WRONG)[i % len(WRONG)]
        bad = WRONG[kind].format(entry=task.gold["entry_point"])
        wrong.append(_episode(client, task_id, bad, probe=False))
    print(f"code: right mean={statistics.mean(right):.2f} wrong mean={statistics.mean(wrong):.2f}")
    assert right == [1.0] * len(sample)
    assert max(wrong) < 0.5 and statistics.mean(wrong) < 0.2


def test_partially_right_gets_partial_reward(code_server: str) -> None:
    client = EnvironmentsClient(code_server, retries=0, timeout=60)
    info = client.create_session(SessionCreate(env="code", task_id="code-clamp_all-0003"))
    # clamps only from below: right exactly on the tests whose values never exceed hi
    code = "def clamp_all(xs):\n    return [max(x, -10**9) for x in xs]\n"
    done = client.step(info.session_id, ToolCall(name="submit", arguments={"code": code}))
    assert done.reward is not None and 0.0 <= done.reward < 1.0


def _data_dir(client: EnvironmentsClient) -> str | None:
    # The server caches its task sets under its data dir; the verifier side rebuilds the
    # same seeded set (generation is deterministic), so any data dir gives equal gold.
    return None


def test_run_code_endpoint_and_readiness(code_server: str) -> None:
    ready = httpx.get(f"{code_server}/readyz", timeout=10).json()
    assert any(k.startswith("sandbox isolation=bwrap") for k in ready["checks"]), ready
    info = httpx.get(f"{code_server}/v1/sandbox", timeout=10).json()
    assert info["isolation"].startswith("bwrap")
    body = {
        "code": "import sys\nprint(open('data.txt').read() + sys.stdin.read())",
        "stdin": " world",
        "files": {"data.txt": "hello"},
        "limits": {"wall_time_s": 5},
    }
    out = httpx.post(f"{code_server}/v1/run_code", json=body, timeout=30).json()
    assert out["status"] == "ok" and out["stdout"] == "hello world\n", out
    assert out["exit_code"] == 0 and out["isolation"] == info["isolation"]
    assert out["wall_time_s"] > 0 and out["memory_bytes"] > 0
    bad = httpx.post(
        f"{code_server}/v1/run_code", json={"code": "", "files": {"../x": "y"}}, timeout=30
    )
    assert bad.status_code == 400
    metrics = httpx.get(f"{code_server}/metrics", timeout=10).text
    assert 'slipstream_environments_sandbox_executions_total{isolation="bwrap' in metrics


async def test_full_pool_answers_429(code_server: str) -> None:
    body = {"code": "import time\ntime.sleep(1.5)", "limits": {"wall_time_s": 5}}
    async with httpx.AsyncClient(base_url=code_server, timeout=30) as c:
        replies = await asyncio.gather(*[c.post("/v1/run_code", json=body) for _ in range(4)])
    codes = sorted(r.status_code for r in replies)
    assert codes.count(200) == 2 and codes.count(429) == 2, codes
    assert all(r.headers.get("retry-after") for r in replies if r.status_code == 429)
