"""`python -m learner --runtime runtime.json [--resume]` (or under torchrun for N ranks)."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m learner",
        description="Slipstream learner: trains on replay batches, publishes policy versions.",
    )
    parser.add_argument(
        "--runtime",
        required=True,
        type=Path,
        help="JobRuntime JSON (job_id, spec, endpoints, run_dir).",
    )
    parser.add_argument(
        "--resume", action="store_true", help="Continue from the latest checkpoint in run_dir."
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from learner.distributed import init_distributed, shutdown
    from learner.loop import Learner
    from learner.replay import connect_replay
    from learner.settings import LearnerSettings
    from services.common.jobspec import JobRuntime
    from services.common.logging import configure_logging

    settings = LearnerSettings()
    configure_logging("learner", settings.log_level, settings.log_json)
    runtime = JobRuntime.model_validate_json(args.runtime.read_text())
    ctx = init_distributed(settings.device, settings.distributed_timeout_s)
    replay = connect_replay(runtime.endpoints) if ctx.is_main else None
    learner = Learner(runtime, settings, ctx, replay)

    def request_stop(signum: int, _frame: object) -> None:
        learner.stop_requested.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        learner.setup(resume=args.resume)
        learner.run()
    finally:
        learner.close()
        shutdown(ctx)
    return 0


if __name__ == "__main__":
    sys.exit(main())
