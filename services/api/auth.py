"""Bearer-token authentication and scope checks for the `/v1` routes.

401: no token, a malformed header, or an unknown/revoked token.
403: a valid token whose scope does not allow the action (see `tokens` for the scopes).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated

from fastapi import Depends, Request

from services.api.db import Database
from services.api.tokens import Scope, find_token
from services.common.errors import Forbidden, Unauthorized


class Action(StrEnum):
    READ = "read"
    SUBMIT = "submit"
    CANCEL = "cancel"
    POST_METRICS = "post_metrics"


_ALLOWED: dict[Scope, set[Action]] = {
    Scope.READ: {Action.READ},
    Scope.WRITE: {Action.READ, Action.SUBMIT, Action.CANCEL},
    Scope.ADMIN: set(Action),
    Scope.INTERNAL: {Action.READ, Action.POST_METRICS},
    Scope.JOB: {Action.READ, Action.POST_METRICS},
}


@dataclass(frozen=True)
class Principal:
    """Who is calling: the token's id, name, scope and (for job tokens) its job."""

    token_id: int
    name: str
    scope: Scope
    job_id: str | None = None

    def require(self, action: Action, *, job_id: str | None = None) -> None:
        if action not in _ALLOWED[self.scope]:
            raise Forbidden(f"token '{self.name}' (scope {self.scope}) may not {action}")
        if self.scope is Scope.JOB and job_id is not None and job_id != self.job_id:
            raise Forbidden(f"token '{self.name}' is bound to job {self.job_id}, not {job_id}")

    def require_owner(self, owner_token_id: int | None) -> None:
        """Writers cancel their own jobs; admins any job."""
        if self.scope is Scope.ADMIN or owner_token_id == self.token_id:
            return
        raise Forbidden(f"token '{self.name}' does not own this job (admin scope needed)")


def bearer_secret(request: Request) -> str:
    header = request.headers.get("authorization")
    if not header:
        raise Unauthorized("missing bearer token: send 'Authorization: Bearer <token>'")
    kind, _, secret = header.partition(" ")
    if kind.lower() != "bearer" or not secret.strip():
        raise Unauthorized("malformed Authorization header: expected 'Bearer <token>'")
    return secret.strip()


def authenticate(request: Request) -> Principal:
    """FastAPI dependency: the caller's Principal, or 401."""
    db: Database = request.app.state.db
    token = find_token(db, bearer_secret(request))
    if token is None:
        raise Unauthorized("invalid or revoked token")
    return Principal(token.id, token.name, Scope(token.scope), token.job_id)


CurrentPrincipal = Annotated[Principal, Depends(authenticate)]
