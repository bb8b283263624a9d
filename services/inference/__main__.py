"""`python -m services.inference`: run the inference service;
`python -m services.inference router ...`: run the router in front of replicas."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "router":
        from services.inference.router import main as router_main

        router_main(argv[1:])
        return
    from services.common.serve import service_main
    from services.inference.app import create_app
    from services.inference.settings import InferenceSettings

    service_main("inference", InferenceSettings, create_app, argv)


if __name__ == "__main__":
    main()
