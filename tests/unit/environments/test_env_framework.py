"""The Environment base class, tool declaration and validation, task sets, registry."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, ClassVar

import pytest
from pydantic import Field

from environments import registry
from environments.base import EnvContext, Environment
from environments.tasks import Task, TaskSet, split_for
from environments.tools import Final, ToolFailure, tool
from services.common.wire import ToolCall


class EchoEnv(Environment):
    name = "echo-test"
    task_type = "exact_match"
    max_turns = 3
    task_set_names: ClassVar[tuple[str, ...]] = ("default",)

    @classmethod
    def build_task_set(cls, name: str, seed: int, ctx: EnvContext) -> TaskSet:
        tasks = [
            Task(
                task_id=f"echo-{i}",
                task_type="exact_match",
                prompt=f"say {i}",
                answer=str(i),
                split=split_for(f"echo-{i}", 0.2),
            )
            for i in range(50)
        ]
        return TaskSet(cls.name, name, "1", seed, tasks)

    @tool("Echo text back.")
    def echo(
        self,
        text: Annotated[str, "What to echo."],
        times: Annotated[int, Field(ge=1, le=3, description="Repeats.")] = 1,
    ) -> str:
        return text * times

    @tool("Fail on purpose.")
    def fail(self, kind: str = "tool_error") -> str:
        if kind == "crash":
            raise RuntimeError("boom")
        raise ToolFailure("this tool always fails", kind=kind)

    @tool("Finish with an answer.", final=True)
    def finish(self, answer: str) -> Final:
        return Final(answer=answer, reward=float(answer == self.task.answer))


def make_env() -> EchoEnv:
    task = Task(task_id="t1", task_type="exact_match", prompt="say 7", answer="7")
    return EchoEnv(task)


def call(env: Environment, name: str, **arguments: object):  # type: ignore[no-untyped-def]
    return env.step(ToolCall(name=name, arguments=arguments))


def test_tool_schema_is_derived_from_the_signature() -> None:
    specs = {s.function.name: s.function for s in EchoEnv.tool_specs()}
    assert list(specs) == ["echo", "fail", "finish"]
    echo = specs["echo"].parameters
    assert echo["required"] == ["text"]
    assert echo["properties"]["text"] == {"type": "string", "description": "What to echo."}
    assert echo["properties"]["times"]["maximum"] == 3
    assert echo["additionalProperties"] is False


def test_valid_call_returns_the_observation() -> None:
    result = call(make_env(), "echo", text="ab", times=2)
    assert result.observation == "abab"
    assert result.error is None and not result.done
    assert result.state_key


def test_bad_arguments_unknown_tools_and_failures_are_observations() -> None:
    env = EchoEnv(Task(task_id="t", task_type="x", prompt="p"), ctx=EnvContext())
    env.max_turns = None  # type: ignore[misc]
    bad = call(env, "echo", text="a", times=9)
    assert bad.error is not None and bad.error.kind == "bad_arguments"
    assert "times" in bad.error.message and "maximum" in bad.error.message
    extra = call(env, "echo", text="a", colour="red")
    assert extra.error is not None and "colour" in extra.error.message
    missing = call(env, "echo")
    assert missing.error is not None and "'text' is a required property" in missing.error.message
    unknown = call(env, "telnet", host="x")
    assert unknown.error is not None and unknown.error.kind == "unknown_tool"
    assert "echo, fail, finish" in unknown.observation
    refused = call(env, "fail", kind="refused")
    assert refused.error is not None and refused.error.kind == "refused"
    crash = call(env, "fail", kind="crash")
    assert crash.error is not None and crash.error.kind == "tool_error"
    assert "RuntimeError: boom" in crash.observation


def test_final_tool_ends_the_episode_with_the_answer() -> None:
    env = make_env()
    result = call(env, "finish", answer="7")
    assert result.done and result.reward == 1.0
    assert result.info["final_answer"] == "7"
    after = call(env, "echo", text="x")
    assert after.done and after.error is not None and after.error.kind == "refused"


def test_turn_limit_ends_the_episode() -> None:
    env = make_env()
    assert not call(env, "echo", text="a").done
    assert not call(env, "echo", text="b").done
    last = call(env, "echo", text="c")
    assert last.done and last.info["truncated"] is True


def test_state_key_depends_on_history() -> None:
    a, b = make_env(), make_env()
    assert call(a, "echo", text="x").state_key == call(b, "echo", text="x").state_key
    assert call(a, "echo", text="y").state_key != call(b, "echo", text="z").state_key


def test_long_observations_are_truncated() -> None:
    env = EchoEnv(
        Task(task_id="t", task_type="x", prompt="p"), ctx=EnvContext(max_observation_chars=100)
    )
    result = call(env, "echo", text="x" * 80, times=2)
    assert len(result.observation) < 160 and "truncated 60 characters" in result.observation


def test_task_set_is_seeded_cached_and_split(tmp_path: Path) -> None:
    ctx = EnvContext(data_dir=tmp_path)
    first = EchoEnv.load_task_set("default", ctx)
    assert (tmp_path / "tasks" / "echo-test" / "default-v1-s0.jsonl").exists()
    again = EchoEnv.load_task_set("default", ctx)  # from the cache file
    assert again.fingerprint() == first.fingerprint()
    sizes = first.sizes()
    assert sizes["train"] + sizes["eval"] == 50 and sizes["eval"] > 0
    assert first.sample("eval", seed=3).task_id == first.sample("eval", seed=3).task_id
    view = first.get("echo-3").view()
    assert "answer" not in view.model_dump()
    with pytest.raises(KeyError):
        EchoEnv.load_task_set("nope", ctx)


def test_registry_explicit_registration_and_get_task(tmp_path: Path) -> None:
    registry.register("echo-test", EchoEnv, replace=True)
    try:
        assert "echo-test" in registry.available()
        assert registry.get_environment("echo-test") is EchoEnv
        task = registry.get_task("echo-test", "default", "echo-4", data_dir=tmp_path)
        assert task.answer == "4"
    finally:
        registry.unregister("echo-test")
    with pytest.raises(registry.UnknownEnvironment, match="available"):
        registry.get_environment("echo-test")


def test_builtin_environments_are_registered() -> None:
    names = registry.available()
    assert {"arithmetic", "search", "sql"} <= set(names)
    assert registry.get_environment("sql").name == "sql"


def test_lazy_string_targets_resolve() -> None:
    registry.register("arith-alias", "environments.arithmetic:ArithmeticEnvironment")
    try:
        assert registry.get_environment("arith-alias").name == "arithmetic"
    finally:
        registry.unregister("arith-alias")
