"""`python -m services.inference`: run the inference service."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> None:
    from services.common.serve import service_main
    from services.inference.app import create_app
    from services.inference.settings import InferenceSettings

    service_main("inference", InferenceSettings, create_app, argv)


if __name__ == "__main__":
    main()
