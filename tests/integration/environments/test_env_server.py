"""Each environment through its HTTP server with the real data: sessions, tool calls, bad
calls, unknown tools, timeouts, the session cap, the task catalog, metrics and MCP."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from mcp import Client

from environments.client import AsyncEnvironmentsClient, EnvironmentsClient
from services.common.errors import NotFound, Overloaded
from services.common.wire import SessionCreate, ToolCall


async def client(server: Any) -> AsyncEnvironmentsClient:
    return AsyncEnvironmentsClient(server.url, retries=0)


async def test_catalog_lists_environments_and_tasks(env_server: Any) -> None:
    async with await client(env_server) as c:
        envs = {e.name: e for e in (await c.list_environments()).environments}
        assert {"arithmetic", "search", "sql", "slow-test"} <= set(envs)
        search = envs["search"]
        assert {t.function.name for t in search.tools} == {"search", "open", "answer"}
        sizes = search.task_sets["default"]
        assert int(sizes["train"]) + int(sizes["eval"]) == 1600
        page = await c.list_tasks("sql", split="eval", offset=5, limit=7)
        assert len(page.tasks) == 7 and page.offset == 5
        assert all(
            "gold" not in t.model_dump() and "answer" not in t.model_dump() for t in page.tasks
        )
        easy = await c.list_tasks("arithmetic", task_set="easy", limit=1000)
        assert {t.difficulty for t in easy.tasks} == {"easy"}


async def test_arithmetic_episode(env_server: Any) -> None:
    async with await client(env_server) as c:
        info = await c.create_session(SessionCreate(env="arithmetic", seed=5))
        assert info.system_prompt and {t.function.name for t in info.tools} == {
            "calculate",
            "answer",
        }
        expression = info.observation.removeprefix("What is ").removesuffix("?")
        calc = await c.step(
            info.session_id, ToolCall(name="calculate", arguments={"expression": expression})
        )
        assert calc.error is None
        done = await c.step(
            info.session_id, ToolCall(name="answer", arguments={"value": calc.observation})
        )
        assert done.done and done.reward == 1.0 and done.info["final_answer"] == calc.observation
        await c.close_session(info.session_id)


async def test_search_episode_with_bad_and_unknown_calls(env_server: Any) -> None:
    async with await client(env_server) as c:
        tasks = await c.list_tasks("search", limit=200)
        task = next(t for t in tasks.tasks if t.metadata["kind"] == "capital_is")
        info = await c.create_session(SessionCreate(env="search", task_id=task.task_id))
        assert info.task.task_id == task.task_id and info.observation == task.prompt
        hits = await c.step(
            info.session_id, ToolCall(name="search", arguments={"query": task.prompt})
        )
        assert hits.error is None and "1. [" in hits.observation
        bad = await c.step(info.session_id, ToolCall(name="search", arguments={"k": "many"}))
        assert bad.error is not None and bad.error.kind == "bad_arguments"
        assert "query" in bad.observation
        unknown = await c.step(info.session_id, ToolCall(name="browse", arguments={}))
        assert unknown.error is not None and unknown.error.kind == "unknown_tool"
        assert "search, open, answer" in unknown.observation
        done = await c.step(info.session_id, ToolCall(name="answer", arguments={"answer": "?"}))
        assert done.done and done.info["final_answer"] == "?" and done.reward == 0.0
        await c.close_session(info.session_id)


async def test_sql_episode_refusals_and_runaway_query(env_server: Any) -> None:
    async with await client(env_server) as c:
        tasks = await c.list_tasks("sql", split="eval", limit=1000)
        task = next(t for t in tasks.tasks if t.metadata["db_id"] == "chinook")
        info = await c.create_session(SessionCreate(env="sql", task_id=task.task_id))
        assert info.task.task_type == "sql" and "Question:" in info.observation
        tables = await c.step(info.session_id, ToolCall(name="list_tables"))
        assert tables.error is None
        write = await c.step(
            info.session_id, ToolCall(name="execute_sql", arguments={"query": "DELETE FROM Track"})
        )
        assert write.error is not None and write.error.kind == "refused"
        attach = await c.step(
            info.session_id,
            ToolCall(name="execute_sql", arguments={"query": "ATTACH DATABASE 'x.db' AS x"}),
        )
        assert attach.error is not None and "ATTACH" in attach.observation
        runaway = await c.step(
            info.session_id,
            ToolCall(
                name="execute_sql",
                arguments={
                    "query": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) "
                    "SELECT max(x) FROM c"
                },
            ),
        )
        assert runaway.error is not None and runaway.error.kind == "timeout"
        assert "time limit" in runaway.observation
        done = await c.step(
            info.session_id, ToolCall(name="submit", arguments={"query": "SELECT 1"})
        )
        assert done.done and done.info["final_answer"] == "SELECT 1"
        await c.close_session(info.session_id)


async def test_tool_call_past_the_time_limit_is_a_timeout_observation(env_server: Any) -> None:
    async with await client(env_server) as c:
        info = await c.create_session(SessionCreate(env="slow-test"))
        result = await c.step(info.session_id, ToolCall(name="sleep", arguments={"seconds": 3}))
        assert result.error is not None and result.error.kind == "timeout"
        assert "did not finish within 1s" in result.observation
        await c.close_session(info.session_id)


async def test_session_cap_answers_429_and_frees_on_close(env_server: Any) -> None:
    cap = env_server.settings.max_sessions
    async with await client(env_server) as c:
        opened = await asyncio.gather(
            *[c.create_session(SessionCreate(env="arithmetic", seed=i)) for i in range(cap)],
            return_exceptions=True,
        )
        ids = [o.session_id for o in opened if not isinstance(o, BaseException)]
        raw = httpx.post(f"{env_server.url}/v1/sessions", json={"env": "arithmetic"})
        assert raw.status_code == 429 and raw.headers["Retry-After"] == "1"
        assert raw.json()["error"] == "overloaded" and "cap" in raw.json()["message"]
        with pytest.raises(Overloaded):
            await c.create_session(SessionCreate(env="arithmetic"))
        await asyncio.gather(*[c.close_session(i) for i in ids])
        again = await c.create_session(SessionCreate(env="arithmetic"))
        await c.close_session(again.session_id)


def test_unknown_session_env_and_bad_bodies(env_server: Any) -> None:
    with EnvironmentsClient(env_server.url, retries=0) as c:
        with pytest.raises(NotFound):
            c.step("no-such-session", ToolCall(name="calculate"))
        with pytest.raises(NotFound, match="not served"):
            c.create_session(SessionCreate(env="chess"))
    bad = httpx.post(f"{env_server.url}/v1/sessions/x/step", json={"tool_call": {"args": 1}})
    assert bad.status_code == 422


def test_metrics_report_sessions_steps_and_errors(env_server: Any) -> None:
    with EnvironmentsClient(env_server.url, retries=0) as c:
        info = c.create_session(SessionCreate(env="arithmetic"))
        c.step(info.session_id, ToolCall(name="nope"))
        text = httpx.get(f"{env_server.url}/metrics").text
        assert 'slipstream_environments_sessions_live{env="arithmetic"}' in text
        assert (
            'slipstream_environments_step_errors_total{env="arithmetic",kind="unknown_tool"}'
            in text
        )
        assert "slipstream_environments_step_seconds_bucket" in text
        c.close_session(info.session_id)


async def test_mcp_view_lists_and_calls_the_same_tools(env_server: Any) -> None:
    async with Client(f"{env_server.url}/mcp") as mcp:
        names = {t.name for t in (await mcp.list_tools()).tools}
        assert {
            "start_episode",
            "end_episode",
            "search__search",
            "sql__execute_sql",
            "arithmetic__calculate",
        } <= names
        start = await mcp.call_tool("start_episode", {"env": "sql", "seed": 1})
        assert not start.is_error
        sid = start.structured_content["session_id"]
        ok = await mcp.call_tool(
            "sql__execute_sql", {"session_id": sid, "query": "SELECT COUNT(*) FROM Genre"}
        )
        assert not ok.is_error and "25" in ok.content[0].text
        refused = await mcp.call_tool(
            "sql__execute_sql", {"session_id": sid, "query": "DROP TABLE Genre"}
        )
        assert refused.is_error and "refused" in refused.content[0].text
        unknown = await mcp.call_tool("sql__drop_everything", {"session_id": sid})
        assert unknown.is_error
        closed = await mcp.call_tool("end_episode", {"session_id": sid})
        assert not closed.is_error
