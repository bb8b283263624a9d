"""MiniWoB++ pages (PyPI `miniwob`, file:// URLs) in headless Debian Chromium through the
environment server: same observation format, navigation outside local pages blocked, and
a scripted agent that solves them while a wrong one scores 0."""

from __future__ import annotations

import importlib.util
import os
import statistics

import pytest
from web_agents import Episode, miniwob_agent

from environments.client import EnvironmentsClient
from services.common.wire import SessionCreate

pytestmark = pytest.mark.skipif(
    not os.access("/usr/bin/chromium", os.X_OK) or importlib.util.find_spec("miniwob") is None
    or importlib.util.find_spec("playwright") is None,
    reason="needs Debian chromium and the PyPI packages playwright and miniwob",
)  # fmt: skip


def _open(client: EnvironmentsClient, task_id: str) -> tuple[Episode, str]:
    info = client.create_session(SessionCreate(env="web", task_id=task_id))
    utterance = info.observation.split("\n", 1)[0].removeprefix("Task: ")
    assert "URL: file://" in info.observation and "\nTitle: " in info.observation
    return Episode(client, info.session_id, info.observation), utterance


def test_scripted_agent_solves_miniwob(web_server: str) -> None:
    client = EnvironmentsClient(web_server, retries=0, timeout=60)
    tasks = client.list_tasks("web", task_set="miniwob", split="train", limit=100).tasks
    assert len({t.metadata["miniwob"] for t in tasks}) == 5
    sample = [t.task_id for t in tasks if t.task_id.endswith("-0") or t.task_id.endswith("-1")]
    right, wrong = [], []
    for task_id in sample:
        ep, utterance = _open(client, task_id)
        right.append(miniwob_agent(ep, utterance, right=True))
        ep, utterance = _open(client, task_id)
        wrong.append(miniwob_agent(ep, utterance, right=False))
    print(f"miniwob: right={right} wrong={wrong}")
    assert right == [1.0] * len(sample)
    assert statistics.mean(wrong) <= 0.1


def test_browser_navigation_is_blocked(web_server: str) -> None:
    client = EnvironmentsClient(web_server, retries=0, timeout=60)
    ep, _ = _open(client, "miniwob-click-link-0")
    for url in ("https://example.com/", "file:///etc/passwd", "http://203.0.113.7/"):
        blocked = ep.act("goto", url=url)
        assert blocked.error is not None and blocked.error.kind == "refused", blocked
        assert "file://" in blocked.observation or "blocked" in blocked.observation
    ep.finish("done")
