"""The MCP view of the environment tools, for outside agent harnesses.

Same sessions, same tools, same validation as the HTTP API. An MCP client sees:
- `start_episode(env, task_id?, split?, seed?)`: opens a session, returns its id, the task
  prompt and the tool names to use;
- `<env>__<tool>(session_id, ...)`: every environment tool, its JSON schema plus the
  `session_id` argument (e.g. `search__search`, `sql__execute_sql`);
- `end_episode(session_id)`: closes the session.

Tool failures come back as results with `isError` set, never as protocol errors. Served
over Streamable HTTP at `/mcp` by the environment server (stateless, JSON responses), or on
its own over stdio: `python -m environments.mcp_view --env arithmetic`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings

from environments.registry import get_environment
from environments.sessions import EnvironmentHost
from services.common.errors import SlipstreamError
from services.common.wire import SessionCreate, StepResult, ToolCall

SEP = "__"
_START = types.Tool(
    name="start_episode",
    description="Open an episode on an environment task; returns session_id and the task.",
    input_schema={
        "type": "object",
        "properties": {
            "env": {"type": "string", "description": "Environment name."},
            "task_id": {"type": "string", "description": "A task id; omitted = drawn."},
            "split": {"type": "string", "enum": ["train", "eval"], "default": "train"},
            "seed": {"type": "integer", "description": "Seed for drawing the task."},
        },
        "required": ["env"],
        "additionalProperties": False,
    },
)
_END = types.Tool(
    name="end_episode",
    description="Close an episode's session.",
    input_schema={
        "type": "object",
        "properties": {"session_id": {"type": "string"}},
        "required": ["session_id"],
        "additionalProperties": False,
    },
)


def _text(text: str, *, error: bool = False, data: Any = None) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=data,
        is_error=error,
    )


def _with_session(schema: dict[str, Any]) -> dict[str, Any]:
    schema = json.loads(json.dumps(schema))
    schema.setdefault("properties", {})["session_id"] = {
        "type": "string",
        "description": "The session from start_episode.",
    }
    schema["required"] = ["session_id", *schema.get("required", [])]
    return schema


class McpView:
    """An MCP server over an EnvironmentHost's sessions."""

    def __init__(self, host: EnvironmentHost) -> None:
        self.host = host
        self.server: Server[Any] = Server(
            "slipstream-environments",
            version="0.1.0",
            instructions="Call start_episode, then the <env>__<tool> tools with its "
            "session_id; the episode ends when a finishing tool (answer/submit) is called.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    def tools(self) -> list[types.Tool]:
        out = [_START, _END]
        for env in self.host.env_names:
            cls = get_environment(env)
            for spec in cls.tool_specs():
                fn = spec.function
                out.append(
                    types.Tool(
                        name=f"{env}{SEP}{fn.name}",
                        description=f"[{env}] {fn.description}",
                        input_schema=_with_session(fn.parameters),
                    )
                )
        return out

    async def _list_tools(
        self, _ctx: Any, _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tools())

    async def _call_tool(
        self, _ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        args = dict(params.arguments or {})
        try:
            if params.name == "start_episode":
                return await self._start(args)
            if params.name == "end_episode":
                await self.host.close(str(args.get("session_id", "")))
                return _text("Episode closed.")
            return await self._step(params.name, args)
        except SlipstreamError as exc:
            return _text(f"Error ({exc.error}): {exc.message}", error=True)
        except Exception as exc:  # pydantic validation of start_episode args, etc.
            return _text(f"Error: {type(exc).__name__}: {exc}", error=True)

    async def _start(self, args: dict[str, Any]) -> types.CallToolResult:
        info = await self.host.create(SessionCreate.model_validate(args))
        tools = [f"{info.env}{SEP}{t.function.name}" for t in info.tools]
        text = (
            f"session_id: {info.session_id}\n"
            f"tools: {', '.join(tools)}\n\n"
            + (f"{info.system_prompt}\n\n" if info.system_prompt else "")
            + info.observation
        )
        return _text(text, data=info.model_dump(mode="json"))

    async def _step(self, name: str, args: dict[str, Any]) -> types.CallToolResult:
        env, sep, tool = name.partition(SEP)
        if not sep:
            return _text(f"Error: unknown tool '{name}'", error=True)
        session_id = str(args.pop("session_id", ""))
        session = self.host.get(session_id)
        if session.env_name != env:
            return _text(
                f"Error: session {session_id} is a '{session.env_name}' episode", error=True
            )
        result: StepResult = await self.host.step(session_id, ToolCall(name=tool, arguments=args))
        return _text(
            result.observation, error=result.error is not None, data=result.model_dump(mode="json")
        )

    # ------------------------------------------------------------------ transports

    def http_app(self, bind_host: str = "127.0.0.1") -> Any:
        """A Starlette app serving Streamable HTTP at its `/mcp` route (stateless)."""
        loopback = bind_host in ("127.0.0.1", "localhost", "::1")
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=loopback,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"] if loopback else [],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*"] if loopback else [],
        )
        return self.server.streamable_http_app(
            streamable_http_path="/mcp",
            stateless_http=True,
            json_response=True,
            transport_security=security,
            host=bind_host,
        )

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run the Streamable HTTP session manager (enter in the app's lifespan)."""
        async with self.server.session_manager.run():
            yield


def main(argv: list[str] | None = None) -> None:
    """Serve the MCP view over stdio (for harnesses that launch a command)."""
    import anyio
    from mcp.server.stdio import stdio_server

    from environments.settings import EnvironmentsSettings
    from services.common.metrics import Metrics

    parser = argparse.ArgumentParser(prog="python -m environments.mcp_view")
    parser.add_argument("--env", action="append", default=[], help="environment to serve")
    args = parser.parse_args(argv)
    host = EnvironmentHost(EnvironmentsSettings(envs=args.env, mcp=False), Metrics("env_mcp"))
    view = McpView(host)

    async def serve() -> None:
        await anyio.to_thread.run_sync(host.preload)
        async with stdio_server() as (read, write):
            await view.server.run(read, write, view.server.create_initialization_options())

    try:
        anyio.run(serve)
    finally:
        host.shutdown()


if __name__ == "__main__":
    main()
