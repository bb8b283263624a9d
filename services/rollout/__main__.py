"""`python -m services.rollout`: the rollout service; `... worker --runtime FILE`: one
worker process (see `services.rollout.cli`)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "worker":
        from services.rollout.cli import worker_main

        sys.exit(worker_main(argv[1:]))

    from services.common.serve import service_main
    from services.rollout.app import create_app
    from services.rollout.settings import RolloutSettings

    service_main("rollout", RolloutSettings, create_app, argv)


if __name__ == "__main__":
    main()
