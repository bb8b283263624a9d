"""The MCP view on its own over stdio (`python -m environments.mcp_view`)."""

from __future__ import annotations

import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def test_stdio_mcp_server_runs_an_arithmetic_episode() -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "environments.mcp_view", "--env", "arithmetic"]
    )
    async with Client(params) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == [
            "start_episode",
            "end_episode",
            "arithmetic__calculate",
            "arithmetic__answer",
        ]
        start = await client.call_tool("start_episode", {"env": "arithmetic", "seed": 2})
        sid = start.structured_content["session_id"]
        calc = await client.call_tool(
            "arithmetic__calculate", {"session_id": sid, "expression": "3*4"}
        )
        assert calc.content[0].text == "12" and not calc.is_error
        bad = await client.call_tool("arithmetic__calculate", {"session_id": sid})
        assert bad.is_error and "expression" in bad.content[0].text
        done = await client.call_tool("arithmetic__answer", {"session_id": sid, "value": "12"})
        assert done.structured_content["done"] is True
