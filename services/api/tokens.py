"""API tokens: random secrets of which only the sha256 is stored.

A token is `slp_` + 43 url-safe random characters (256 bits), so a plain sha256 is a
sound verifier (no dictionary to attack); lookups go by the hash's unique index.

Scopes, from least to most: `read` (GET everything), `write` (+ submit jobs, cancel own
jobs), `admin` (everything, any job). Two scopes are for job processes: `internal`
(read + post metrics for any job) and `job` (read + post metrics for one job: the runner
creates one per job, passes it as $SLIPSTREAM_API_TOKEN and revokes it when the job ends).

`create_token(db_url, name, scope)` is what `slipstream tokens create NAME` calls.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from enum import StrEnum
from pathlib import Path

from sqlalchemy import select, update

from services.api.db import Database, open_database
from services.api.models import Token

TOKEN_PREFIX = "slp_"


class Scope(StrEnum):
    READ = "read"
    WRITE = "write"
    ADMIN = "admin"
    INTERNAL = "internal"
    JOB = "job"


def hash_token(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode()).hexdigest()


def new_secret() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def add_token(
    db: Database,
    name: str,
    scope: Scope | str,
    *,
    job_id: str | None = None,
    plaintext: str | None = None,
) -> tuple[int, str]:
    """Store a new token; returns (id, plaintext). The plaintext is never stored."""
    scope = Scope(scope)
    if scope is Scope.JOB and not job_id:
        raise ValueError("a 'job' token needs a job_id")
    plaintext = plaintext or new_secret()
    row = Token(
        name=name,
        token_hash=hash_token(plaintext),
        scope=scope.value,
        job_id=job_id,
        created_at=time.time(),
    )
    with db.session() as session:
        session.add(row)
        session.commit()
        return row.id, plaintext


def create_token(db_url: str, name: str, scope: Scope | str = Scope.WRITE) -> str:
    """Create a token in the store at `db_url` (migrating it first) and return the
    plaintext, shown to the user once."""
    db = open_database(db_url)
    try:
        return add_token(db, name, scope)[1]
    finally:
        db.dispose()


def find_token(db: Database, plaintext: str) -> Token | None:
    """The live (not revoked) token with this plaintext, if any."""
    with db.session() as session:
        return session.scalar(
            select(Token).where(
                Token.token_hash == hash_token(plaintext), Token.revoked_at.is_(None)
            )
        )


def revoke_token(db: Database, token_id: int) -> bool:
    with db.session() as session:
        result = session.execute(
            update(Token)
            .where(Token.id == token_id, Token.revoked_at.is_(None))
            .values(revoked_at=time.time())
        )
        session.commit()
        return bool(result.rowcount)  # type: ignore[attr-defined]


def list_tokens(db: Database) -> list[Token]:
    with db.session() as session:
        return list(session.scalars(select(Token).order_by(Token.id)))


def has_user_token(db: Database) -> bool:
    """Whether any live token a person could use exists (job tokens do not count)."""
    with db.session() as session:
        found = session.scalar(
            select(Token.id).where(Token.revoked_at.is_(None), Token.scope != Scope.JOB.value)
        )
        return found is not None


def ensure_token(db: Database, name: str, scope: Scope, plaintext: str) -> None:
    """Register a given plaintext (e.g. from a secret) unless it is already known."""
    if find_token(db, plaintext) is None:
        add_token(db, name, scope, plaintext=plaintext)


def write_token_file(path: Path, plaintext: str) -> None:
    """Write the token so that only its owner can read it (mode 0600 from the start)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(plaintext + "\n")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def bootstrap_token(db: Database, token_file: Path) -> bool:
    """If no user token exists, create an admin token and write it to `token_file`.
    Returns True when a token was created."""
    if has_user_token(db):
        return False
    _, plaintext = add_token(db, "bootstrap", Scope.ADMIN)
    write_token_file(token_file, plaintext)
    return True


def read_token_file(path: Path) -> str | None:
    """The token in a bootstrap token file, or None (the CLI's fallback)."""
    try:
        return path.read_text().strip() or None
    except FileNotFoundError:
        return None
