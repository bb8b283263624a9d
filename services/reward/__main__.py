"""`python -m services.reward`: run the reward service."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> None:
    from services.common.serve import service_main
    from services.reward.app import create_app
    from services.reward.settings import RewardSettings

    service_main("reward", RewardSettings, create_app, argv)


if __name__ == "__main__":
    main()
