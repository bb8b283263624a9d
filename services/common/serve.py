"""Run a service's app under uvicorn: the body of every `python -m services.X`."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from typing import TypeVar

from fastapi import FastAPI

from services.common.logging import configure_logging
from services.common.settings import ServiceSettings

S = TypeVar("S", bound=ServiceSettings)
log = logging.getLogger(__name__)


def _module_of(service: str) -> str:
    from services.common.topology import by_name

    try:
        return by_name(service).module
    except KeyError:
        return f"services.{service}"


def service_main(
    service: str,
    settings_cls: type[S],
    create_app: Callable[[S], FastAPI],
    argv: list[str] | None = None,
) -> None:
    """Parse `--host/--port` (everything else comes from `SLIPSTREAM_<SERVICE>_*` env vars),
    configure logging and serve."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {_module_of(service)}",
        description=f"Slipstream {service} service. Settings come from env vars "
        f"SLIPSTREAM_{service.upper()}_<FIELD>; see --show-settings.",
    )
    parser.add_argument("--host", help="bind address (overrides settings)")
    parser.add_argument("--port", type=int, help="TCP port (overrides settings)")
    parser.add_argument(
        "--show-settings", action="store_true", help="print the effective settings and exit"
    )
    args = parser.parse_args(argv)
    overrides = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    settings = settings_cls(**overrides)
    if args.show_settings:
        print(settings.model_dump_json(indent=2))  # noqa: T201 - CLI output
        return
    configure_logging(service, settings.log_level, settings.log_json)

    import uvicorn

    app = create_app(settings)
    log.info("starting %s on %s:%d", service, settings.host, settings.port)
    uvicorn.run(app, host=settings.host, port=settings.port, log_config=None)
