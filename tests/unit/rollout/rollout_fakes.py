"""Scripted stand-ins for the inference and environment services (unit tests)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from services.common.wire import (
    FinishReason,
    GenerateResponse,
    SamplingParams,
    SessionCreate,
    SessionInfo,
    StepResult,
    TaskView,
    ToolCall,
    ToolFunction,
    ToolSpec,
)
from services.rollout.chat import ChatTokenizer

CUT = "\x00cut"  # a reply ending with this is returned without a stop token (length)


class ScriptedGenerator:
    """Replies with scripted text (tokenized here, as an engine would sample it) followed
    by the stop token; an Exception in the script is raised instead."""

    def __init__(self, chat: ChatTokenizer, replies: list[str | Exception], version: int = 0):
        self.chat = chat
        self.replies = list(replies)
        self.version = version
        self.prompts: list[list[int]] = []

    async def generate(
        self, prompt_token_ids: list[int], sampling: SamplingParams | None = None,
        episode_id: str | None = None,
    ) -> GenerateResponse:
        self.prompts.append(list(prompt_token_ids))
        reply = self.replies.pop(0) if self.replies else "done"
        if isinstance(reply, Exception):
            raise reply
        cut = reply.endswith(CUT)
        ids = self.chat.encode(reply.removesuffix(CUT))
        if not cut:
            ids.append(self.chat.stop_token_ids[0])
        limit = sampling.max_tokens if sampling else len(ids)
        reason = FinishReason.LENGTH if cut or len(ids) > limit else FinishReason.STOP
        ids = ids[:limit]
        return GenerateResponse(
            request_id="r", token_ids=ids, logprobs=[-0.1 - i / 100 for i in range(len(ids))],
            policy_versions=[self.version] * len(ids), finish_reason=reason,
            prompt_tokens=len(prompt_token_ids),
        )


def _tool(name: str, arg: str) -> ToolSpec:
    return ToolSpec(function=ToolFunction(
        name=name, description=f"{name} tool",
        parameters={"type": "object", "properties": {arg: {"type": "string"}}, "required": [arg]},
    ))


@dataclass
class FakeEnv:
    """calculate(expression) and answer(value); answer ends the episode with reward 1."""

    fail_reset: Exception | None = None
    fail_step: Exception | None = None
    max_turns: int | None = None
    closed: list[str] = field(default_factory=list)
    steps: int = 0

    async def create_session(self, request: SessionCreate) -> SessionInfo:
        if self.fail_reset:
            raise self.fail_reset
        task_id = request.task_id or f"t{request.seed}"
        return SessionInfo(
            session_id=f"s-{task_id}", env=request.env,
            task=TaskView(task_id=task_id, task_type="arithmetic", prompt="What is 6*7?"),
            observation="What is 6*7?", system_prompt="You solve arithmetic.",
            tools=[_tool("calculate", "expression"), _tool("answer", "value")],
            max_turns=self.max_turns,
        )

    async def step(self, session_id: str, call: ToolCall) -> StepResult:
        if self.fail_step:
            raise self.fail_step
        self.steps += 1
        key = f"k{self.steps}"
        if call.name == "answer":
            value = str(call.arguments.get("value"))
            return StepResult(observation="Answer recorded.", done=True, reward=1.0,
                              info={"final_answer": value}, state_key=key)
        if call.name == "calculate":
            expr = str(call.arguments.get("expression", ""))
            allowed = set("0123456789+-*/() ")
            out = str(eval(expr)) if expr and set(expr) <= allowed else "error"
            return StepResult(observation=out, state_key=key)
        return StepResult(observation=f"Unknown tool '{call.name}'.", state_key=key)

    async def close_session(self, session_id: str) -> None:
        self.closed.append(session_id)

    async def list_tasks(self, env: str, split: Any = "train", offset: int = 0,
                         limit: int = 100, task_set: str | None = None) -> Any:
        @dataclass
        class Page:
            tasks: list[TaskView]

        tasks = [TaskView(task_id=f"{split}-{i}", task_type="arithmetic", prompt="p")
                 for i in range(5)]
        return Page(tasks[offset : offset + limit])


def call_text(name: str, **arguments: Any) -> str:
    import json

    return f'<tool_call>\n{json.dumps({"name": name, "arguments": arguments})}\n</tool_call>'
