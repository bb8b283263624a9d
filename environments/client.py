"""Typed clients for the environments service (rollout workers use the async one)."""

from __future__ import annotations

from typing import Literal

from environments.schemas import EnvironmentList, TaskList
from services.common.client import AsyncServiceClient, ServiceClient
from services.common.wire import SessionCreate, SessionInfo, StepRequest, StepResult, ToolCall

Split = Literal["train", "eval"]


def _tasks_params(
    env: str, split: Split, offset: int, limit: int, task_set: str | None
) -> dict[str, str | int]:
    params: dict[str, str | int] = {"env": env, "split": split, "offset": offset, "limit": limit}
    if task_set is not None:
        params["task_set"] = task_set
    return params


def _as_request(call: ToolCall | StepRequest) -> StepRequest:
    return call if isinstance(call, StepRequest) else StepRequest(tool_call=call)


class EnvironmentsClient(ServiceClient):
    """Synchronous client for the environments service."""

    def create_session(self, request: SessionCreate) -> SessionInfo:
        return self._post_model("/v1/sessions", request, SessionInfo)

    def step(self, session_id: str, call: ToolCall | StepRequest) -> StepResult:
        return self._post_model(f"/v1/sessions/{session_id}/step", _as_request(call), StepResult)

    def close_session(self, session_id: str) -> None:
        self._request("DELETE", f"/v1/sessions/{session_id}")

    def list_tasks(
        self,
        env: str,
        split: Split = "train",
        offset: int = 0,
        limit: int = 100,
        task_set: str | None = None,
    ) -> TaskList:
        params = _tasks_params(env, split, offset, limit, task_set)
        return self._get_model("/v1/tasks", TaskList, params=params)

    def list_environments(self) -> EnvironmentList:
        return self._get_model("/v1/environments", EnvironmentList)


class AsyncEnvironmentsClient(AsyncServiceClient):
    """Asynchronous client for the environments service.

    Step is not idempotent, so only transport faults before the request is sent and 429/5xx
    answers are retried (the base policy); a `NotFound` means the session expired or closed.
    """

    async def create_session(self, request: SessionCreate) -> SessionInfo:
        return await self._post_model("/v1/sessions", request, SessionInfo)

    async def step(self, session_id: str, call: ToolCall | StepRequest) -> StepResult:
        return await self._post_model(
            f"/v1/sessions/{session_id}/step", _as_request(call), StepResult
        )

    async def close_session(self, session_id: str) -> None:
        await self._request("DELETE", f"/v1/sessions/{session_id}")

    async def list_tasks(
        self,
        env: str,
        split: Split = "train",
        offset: int = 0,
        limit: int = 100,
        task_set: str | None = None,
    ) -> TaskList:
        params = _tasks_params(env, split, offset, limit, task_set)
        return await self._get_model("/v1/tasks", TaskList, params=params)

    async def list_environments(self) -> EnvironmentList:
        return await self._get_model("/v1/environments", EnvironmentList)
