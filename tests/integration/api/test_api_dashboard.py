"""The dashboard page in a real headless Chromium: job list, chart and log of a job."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from api_helpers import ApiServer, learner_cmd, runner_config, spec, worker_cmd

from services.api.client import ApiClient
from services.common.wire import MetricPoint

CHROMIUM = shutil.which("chromium")


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian chromium")
def test_dashboard_renders_jobs_chart_and_logs(tmp_path: Path) -> None:
    runner = runner_config(learner_cmd("--steps", "12", "--step-s", "0.02"), worker_cmd())
    api = ApiServer(tmp_path, f"sqlite:///{tmp_path / 'db.sqlite'}", runner).start()
    try:
        with ApiClient(api.url, token=api.token) as client:
            job = client.submit(spec(name="dash-demo"))
            assert client.wait(job.id).status == "completed"
            evals = [
                MetricPoint(job_id=job.id, step=s, kind="eval", values={"eval_reward": s / 20})
                for s in (0, 5, 11)
            ]
            client.post_metrics(job.id, evals)
        url = f"{api.url}/dashboard#token={api.token}&job={job.id}"
        dom = subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--user-data-dir=" + str(tmp_path / "chromium"),
                "--virtual-time-budget=8000",
                "--dump-dom",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
    finally:
        api.stop()
    rows = re.search(r'<tbody id="jobs">(.*?)</tbody>', dom, re.S)
    assert rows and job.id in rows.group(1) and "completed" in rows.group(1)
    assert "0.917" in rows.group(1)  # latest reward_mean, 11/12
    legend = re.search(r'<div class="legend" id="legend">(.*?)</div>', dom, re.S)
    assert (
        legend and "train: 0.917 @ 11" in legend.group(1) and "eval: 0.550 @ 11" in legend.group(1)
    )
    assert dom.count("<path") == 2  # one line per series
    assert "[learner] step 11 reward 0.917" in dom
    assert '<span id="msg"></span>' in dom  # no error shown
