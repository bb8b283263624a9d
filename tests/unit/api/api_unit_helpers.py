"""Helpers for api unit tests: an app on a temporary SQLite store, with no job runner
(no processes), and tokens of every scope."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from services.api.app import create_app
from services.api.settings import ApiSettings
from services.api.tokens import Scope, add_token


@dataclass
class Api:
    client: TestClient
    home: Path
    tokens: dict[str, str]

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def submit(self, who: str = "writer", **spec: Any) -> dict[str, Any]:
        body = {"environments": [{"name": "arithmetic"}], **spec}
        response = self.client.post("/v1/jobs", json=body, headers=self.auth(who))
        assert response.status_code == 201, response.text
        return response.json()


def make_api(home: Path, **settings: Any) -> Iterator[Api]:
    app = create_app(ApiSettings(home=home, runner_enabled=False, **settings))
    with TestClient(app) as client:
        db = app.state.db
        tokens = {"admin": (home / "token").read_text().strip()}
        for who, scope in [
            ("reader", Scope.READ),
            ("writer", Scope.WRITE),
            ("other_writer", Scope.WRITE),
            ("internal", Scope.INTERNAL),
        ]:
            tokens[who] = add_token(db, who, scope)[1]
        yield Api(client, home, tokens)
