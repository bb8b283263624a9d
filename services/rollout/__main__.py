"""`python -m services.rollout`: run the rollout service."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> None:
    from services.common.serve import service_main
    from services.rollout.app import create_app
    from services.rollout.settings import RolloutSettings

    service_main("rollout", RolloutSettings, create_app, argv)


if __name__ == "__main__":
    main()
