"""`python -m environments.code`: a standalone code-execution server (`POST /v1/run_code`,
`GET /v1/sandbox`, /healthz, /readyz, /metrics). Sandbox settings come from
`SLIPSTREAM_SANDBOX_*` env vars; it refuses to start below `min_isolation`."""

from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m environments.code", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1", help="bind address")
    parser.add_argument("--port", type=int, default=8011, help="TCP port")
    parser.add_argument("--log-level", default="INFO", help="root log level")
    args = parser.parse_args(argv)

    import uvicorn

    from environments.code.app import create_app
    from services.common.logging import configure_logging

    configure_logging("sandbox", args.log_level, False)
    uvicorn.run(create_app(), host=args.host, port=args.port, log_config=None)


if __name__ == "__main__":
    main()
