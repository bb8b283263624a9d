"""`python -m services.api`: run the api service."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> None:
    from services.api.app import create_app
    from services.api.settings import ApiSettings
    from services.common.serve import service_main

    service_main("api", ApiSettings, create_app, argv)


if __name__ == "__main__":
    main()
