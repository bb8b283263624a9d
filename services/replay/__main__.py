"""`python -m services.replay`: run the replay service."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> None:
    from services.common.serve import service_main
    from services.replay.app import create_app
    from services.replay.settings import ReplaySettings

    service_main("replay", ReplaySettings, create_app, argv)


if __name__ == "__main__":
    main()
