"""Typed errors shared by services and clients, and their JSON rendering."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field


class ErrorBody(BaseModel):
    """The JSON body of every non-2xx response a Slipstream service sends."""

    error: str = Field(description="Machine-readable error type, e.g. 'not_found'.")
    message: str = Field(description="What went wrong and, where possible, what to do.")
    field: str | None = Field(None, description="The request field at fault, if any.")


class SlipstreamError(Exception):
    """Base class: carries an HTTP status and a machine-readable error type."""

    status_code = 500
    error = "internal"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def body(self) -> ErrorBody:
        return ErrorBody(error=self.error, message=self.message, field=self.field)


class Unauthorized(SlipstreamError):
    """No credentials, or credentials the service does not know."""

    status_code = 401
    error = "unauthorized"


class Forbidden(SlipstreamError):
    """Valid credentials that do not allow this action."""

    status_code = 403
    error = "forbidden"


class NotFound(SlipstreamError):
    status_code = 404
    error = "not_found"


class Conflict(SlipstreamError):
    status_code = 409
    error = "conflict"


class BadRequest(SlipstreamError):
    status_code = 400
    error = "bad_request"


class Overloaded(SlipstreamError):
    """A bounded queue or capacity limit is full: the caller should back off and retry."""

    status_code = 429
    error = "overloaded"


class NotReady(SlipstreamError):
    status_code = 503
    error = "not_ready"


class UpstreamError(SlipstreamError):
    """A dependency (another service, Redis, the engine) failed or timed out."""

    status_code = 502
    error = "upstream"


def install_error_handlers(app: FastAPI) -> None:
    """Render SlipstreamError subclasses as `ErrorBody` JSON with their status code."""

    @app.exception_handler(SlipstreamError)
    async def _handle(_: Request, exc: SlipstreamError) -> JSONResponse:
        headers = {"Retry-After": "1"} if exc.status_code == 429 else None
        return JSONResponse(
            exc.body().model_dump(), status_code=exc.status_code, headers=headers
        )
