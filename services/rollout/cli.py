"""`python -m services.rollout worker --runtime runtime.json`: one rollout worker process.

Exit status: 0 when the budget is reached, the job is finished, or on SIGTERM/SIGINT
(in-flight episodes are aborted and their admission slots given back); 1 when episodes
keep failing (the reason is logged and written to `<run_dir>/rollout-worker-<i>.json`);
2 for a bad runtime file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
from dataclasses import asdict
from pathlib import Path

from pydantic import ValidationError

from services.common.jobspec import JobRuntime
from services.common.logging import configure_logging
from services.rollout.settings import RolloutSettings, WorkerConfig
from services.rollout.worker import RolloutWorker, WorkerOutcome

log = logging.getLogger(__name__)


def load_runtime(path: str) -> JobRuntime:
    return JobRuntime.model_validate_json(Path(path).read_text())


def write_outcome(runtime: JobRuntime, outcome: WorkerOutcome) -> None:
    path = Path(runtime.run_dir) / f"rollout-worker-{runtime.worker_index}.json"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**asdict(outcome), "exit_code": outcome.exit_code}))
    except OSError as exc:
        log.warning("cannot write %s: %s", path, exc)


async def run_worker(runtime: JobRuntime, config: WorkerConfig) -> WorkerOutcome:
    from services.rollout.factory import http_deps

    async with http_deps(runtime, config) as deps:
        worker = RolloutWorker(runtime, deps, config)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, worker.stop)
        return await worker.run()


def worker_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m services.rollout worker",
        description="Run one rollout worker for a job (settings: SLIPSTREAM_ROLLOUT_WORKER__*).",
    )
    parser.add_argument("--runtime", required=True, help="JobRuntime JSON file")
    args = parser.parse_args(argv)
    settings = RolloutSettings()
    configure_logging("rollout", settings.log_level, settings.log_json)
    try:
        runtime = load_runtime(args.runtime)
    except (OSError, ValidationError) as exc:
        log.error("bad runtime file %s: %s", args.runtime, exc)
        return 2
    outcome = asyncio.run(run_worker(runtime, settings.worker))
    write_outcome(runtime, outcome)
    if outcome.exit_code:
        log.error("rollout worker failed: %s", outcome.detail)
    return outcome.exit_code
