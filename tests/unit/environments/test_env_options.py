"""Per-session environment options: validated at the edge, honoured by the environment."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from environments.app import create_app
from environments.settings import EnvironmentsSettings


@pytest.fixture
def client(tmp_path: Path):  # type: ignore[no-untyped-def]
    settings = EnvironmentsSettings(envs=["arithmetic"], data_dir=tmp_path, mcp=False)
    with TestClient(create_app(settings)) as c:
        yield c


def test_arithmetic_with_tools_by_default(client: TestClient) -> None:
    info = client.post("/v1/sessions", json={"env": "arithmetic", "seed": 1}).json()
    assert {t["function"]["name"] for t in info["tools"]} == {"calculate", "answer"}
    assert "calculate(expression)" in info["system_prompt"]


def test_arithmetic_direct_mode_offers_no_tools(client: TestClient) -> None:
    body = {"env": "arithmetic", "seed": 1, "options": {"tools": False}}
    info = client.post("/v1/sessions", json=body).json()
    assert info["tools"] == []
    assert info["system_prompt"] == "Answer the arithmetic question with just the final number."
    assert info["observation"].startswith("What is ")


def test_unknown_option_is_rejected_naming_it(client: TestClient) -> None:
    body = {"env": "arithmetic", "options": {"tool": False}}
    response = client.post("/v1/sessions", json=body)
    assert response.status_code == 400
    assert response.json()["field"] == "options.tool"
    assert "unknown option" in response.json()["message"]


def test_bad_option_value_is_rejected(client: TestClient) -> None:
    body = {"env": "arithmetic", "options": {"tools": "sometimes"}}
    response = client.post("/v1/sessions", json=body)
    assert response.status_code == 400
    assert response.json()["field"] == "options.tools"
