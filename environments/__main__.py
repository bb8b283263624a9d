"""`python -m environments`: run the environments service."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> None:
    from environments.app import create_app
    from environments.settings import EnvironmentsSettings
    from services.common.serve import service_main

    service_main("environments", EnvironmentsSettings, create_app, argv)


if __name__ == "__main__":
    main()
