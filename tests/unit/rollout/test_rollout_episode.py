"""The episode runner over scripted inference/env: token bookkeeping and failure paths."""

from __future__ import annotations

import asyncio

from rollout_fakes import CUT, FakeEnv, ScriptedGenerator, call_text

from services.common.errors import NotFound
from services.common.wire import TrajectoryStatus
from services.rollout.chat import ChatTokenizer
from services.rollout.checks import problems
from services.rollout.episode import EpisodeLimits, EpisodeRunner, EpisodeTask

TASK = EpisodeTask(job_id="j", env="arith", group_id="g", seed=3)


def run(chat, replies, env=None, **limits):  # type: ignore[no-untyped-def]
    env = env or FakeEnv()
    gen = ScriptedGenerator(chat, replies, version=5)
    runner = EpisodeRunner(chat, gen, env, EpisodeLimits(**limits))
    return asyncio.run(runner.run(TASK)), gen, env


def test_multi_turn_episode(chat: ChatTokenizer) -> None:
    replies = [call_text("calculate", expression="6*7"), call_text("answer", value="42")]
    result, gen, env = run(chat, replies)
    traj = result.trajectory
    assert traj.status == TrajectoryStatus.OK and traj.error is None
    assert result.final_answer == "42" and result.env_reward == 1.0
    assert len(traj.turn_spans) == 2 and traj.turn_rewards == [0.0, 1.0]
    assert traj.step_keys is not None and len(traj.step_keys) == 2
    assert traj.step_keys[1] == "k1"  # turn 1 acts from the state after step 1
    assert [m.role for m in traj.messages] == [
        "system", "user", "assistant", "tool", "assistant", "tool"
    ]
    assert traj.messages[3].content == "42" and traj.messages[2].tool_calls[0].name == "calculate"
    assert traj.prompt_length == len(gen.prompts[0])
    # each generation saw exactly the tokens accumulated so far (no re-tokenization)
    assert gen.prompts[1] == traj.token_ids[: len(gen.prompts[1])]
    assert all(v == 5 for v, m in zip(traj.policy_versions, traj.loss_mask, strict=True) if m)
    assert traj.oldest_version == 5
    assert env.closed == ["s-t3"]
    text = chat.decode(traj.token_ids)
    assert "<tool_response>\n42\n</tool_response>" in text
    assert text.endswith("<tool_response>\nAnswer recorded.\n</tool_response><|im_end|>\n")
    tools = asyncio.run(env.create_session(_session_request())).tools
    assert problems(chat, traj, tools) == []


def test_decodes_to_transcript_with_tools(chat: ChatTokenizer) -> None:
    env = FakeEnv()
    replies = [call_text("calculate", expression="6*7"), "It is 42."]
    result, _, _ = run(chat, replies, env=env)
    traj = result.trajectory
    session_tools = asyncio.run(env.create_session(_session_request())).tools
    assert chat.decode(traj.token_ids) == chat.render_transcript(traj.messages, session_tools)
    assert result.final_answer == "It is 42." and traj.status == TrajectoryStatus.OK
    assert chat.decode(traj.token_ids[-2:]) == "<|im_end|>\n"
    assert traj.loss_mask[-2:] == [1, 0]  # the model's stop token is trained on


def _session_request():  # type: ignore[no-untyped-def]
    from services.common.wire import SessionCreate

    return SessionCreate(env="arith", seed=3)


def test_malformed_call_is_an_observation(chat: ChatTokenizer) -> None:
    replies = ["<tool_call>{not json}</tool_call>", call_text("answer", value="1")]
    result, _, _ = run(chat, replies)
    traj = result.trajectory
    assert traj.status == TrajectoryStatus.OK
    assert traj.messages[2].tool_call_error is not None
    assert traj.messages[3].content.startswith("Error: your tool call could not be parsed")
    assert len(traj.turn_spans) == 2
    tools = asyncio.run(FakeEnv().create_session(_session_request())).tools
    assert problems(chat, traj, tools) == []


def test_max_turns_truncates(chat: ChatTokenizer) -> None:
    replies = [call_text("calculate", expression="1+1")] * 5
    result, _, _ = run(chat, replies, max_turns=3)
    traj = result.trajectory
    assert traj.status == TrajectoryStatus.TRUNCATED and len(traj.turn_spans) == 3
    assert traj.metadata["truncated_by"] == "max_turns"


def test_env_turn_cap_truncates(chat: ChatTokenizer) -> None:
    replies = [call_text("calculate", expression="1+1")] * 5
    result, _, _ = run(chat, replies, env=FakeEnv(max_turns=2), max_turns=8)
    assert len(result.trajectory.turn_spans) == 2
    assert result.trajectory.status == TrajectoryStatus.TRUNCATED


def test_token_budget_truncates(chat: ChatTokenizer) -> None:
    replies = [call_text("calculate", expression="1+1")] * 10
    prompt = len(run(chat, ["x"])[1].prompts[0])
    budget = prompt + 120
    result, _, _ = run(chat, replies, max_episode_tokens=budget, max_turns=10)
    traj = result.trajectory
    assert traj.status == TrajectoryStatus.TRUNCATED
    assert len(traj.token_ids) <= budget + 2
    assert len(traj.turn_spans) >= 2
    assert traj.metadata["truncated_by"] in {"token_budget", "max_tokens"}


def test_length_cut_reply(chat: ChatTokenizer) -> None:
    result, _, _ = run(chat, ["forty" + CUT])
    traj = result.trajectory
    assert traj.status == TrajectoryStatus.TRUNCATED and result.final_answer == "forty"
    assert chat.decode(traj.token_ids).endswith("forty<|im_end|>\n")
    assert traj.loss_mask[-2:] == [0, 0]  # the closing came from the template


def test_inference_failure_is_data(chat: ChatTokenizer) -> None:
    result, _, env = run(chat, [RuntimeError("engine down")])
    traj = result.trajectory
    assert traj.status == TrajectoryStatus.ABORTED
    assert traj.error.kind == "inference_error" and "engine down" in traj.error.message
    assert traj.error.turn == 0 and env.closed


def test_inference_timeout(chat: ChatTokenizer) -> None:
    class Slow(ScriptedGenerator):
        async def generate(self, *a, **k):  # type: ignore[no-untyped-def]
            await asyncio.sleep(5)

    runner = EpisodeRunner(chat, Slow(chat, []), FakeEnv(), EpisodeLimits(generate_timeout_s=0.1))
    traj = asyncio.run(runner.run(TASK)).trajectory
    assert traj.status == TrajectoryStatus.ABORTED and traj.error.kind == "inference_timeout"


def test_env_failures_are_data(chat: ChatTokenizer) -> None:
    result, _, _ = run(chat, [], env=FakeEnv(fail_reset=ConnectionError("refused")))
    traj = result.trajectory
    assert traj.status == TrajectoryStatus.ENV_ERROR and traj.error.kind == "env_unavailable"
    assert traj.token_ids == []
    env = FakeEnv(fail_step=NotFound("session expired"))
    result, _, _ = run(chat, [call_text("calculate", expression="1")], env=env)
    traj = result.trajectory
    assert traj.status == TrajectoryStatus.ENV_ERROR and traj.error.kind == "env_error"
    assert len(traj.turn_spans) == 1 and traj.num_model_tokens > 0
