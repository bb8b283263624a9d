"""Stands in for a rollout worker: records its pid (and a grandchild's), then runs until
signalled. `--ignore-term` makes it shrug off SIGTERM (the runner must SIGKILL it);
`--exit-after S --exit CODE` makes it die on its own."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from services.common.jobspec import JobRuntime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runtime", required=True)
    parser.add_argument("--ignore-term", action="store_true")
    parser.add_argument("--exit-after", type=float, default=None)
    parser.add_argument("--exit", type=int, default=0)
    args = parser.parse_args()
    runtime = JobRuntime.model_validate_json(Path(args.runtime).read_text())
    run_dir = Path(runtime.run_dir)
    index = runtime.worker_index
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    (run_dir / f"worker-{index}-child.pid").write_text(str(child.pid))
    (run_dir / f"worker-{index}.pid").write_text(str(os.getpid()))
    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print(f"worker {index} of {runtime.job_id} up", flush=True)
    start = time.monotonic()
    while args.exit_after is None or time.monotonic() - start < args.exit_after:
        time.sleep(0.05)
    print(f"worker {index}: error: environment exploded (code {args.exit})", flush=True)
    sys.exit(args.exit)


if __name__ == "__main__":
    main()
