"""Error types and renderings specific to the api service."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from services.common.errors import ErrorBody, SlipstreamError
from services.common.jobspec import JobSpecError


class InvalidRequest(SlipstreamError):
    """The body or a parameter is well-formed JSON but not valid (422)."""

    status_code = 422
    error = "invalid"


def invalid_spec(exc: JobSpecError) -> InvalidRequest:
    """A job spec problem as a 422 whose message lists every bad field by its path."""
    first = exc.problems[0][0] if exc.problems else None
    return InvalidRequest(str(exc), field=first)


def _location(loc: tuple[int | str, ...]) -> str:
    parts = [p for p in loc if p not in ("body", "query", "path", "header")]
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(request)"


def install_validation_handler(app: FastAPI) -> None:
    """Render FastAPI's request validation errors in the common `ErrorBody` shape."""

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [(_location(tuple(e.get("loc", ()))), e.get("msg", "")) for e in exc.errors()]
        message = "invalid request:\n" + "\n".join(f"  - {p}: {m}" for p, m in problems)
        body = ErrorBody(
            error="invalid", message=message, field=problems[0][0] if problems else None
        )
        return JSONResponse(body.model_dump(), status_code=422)
