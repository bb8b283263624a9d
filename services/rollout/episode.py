"""One episode: reset a session, then model turn after model turn (token-level
generation, tool-call parsing, environment step, observation appended) until the
environment says done, the model answers without a tool call, `max_turns`, or the token
budget. The token sequence is built incrementally (see `chat.py`): model tokens exactly
as sampled with loss_mask 1, behaviour logprobs and per-token policy versions; template
and observation tokens with loss_mask 0.

Failures never raise out of `run` (a bad episode is data): they end the episode with a
`status` and an `EpisodeError`. Only cancellation propagates.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from services.common.errors import NotFound
from services.common.jobspec import JobSpec
from services.common.wire import (
    EpisodeError,
    FinishReason,
    GenerateResponse,
    Message,
    SamplingParams,
    SessionCreate,
    SessionInfo,
    StepResult,
    Timings,
    ToolCall,
    Trajectory,
    TrajectoryStatus,
    TurnSpan,
)
from services.inference.toolcalls import parse_tool_calls
from services.rollout.backends import EnvSessions, Generator
from services.rollout.chat import ChatTokenizer

log = logging.getLogger(__name__)
ErrorKind = Literal[
    "env_unavailable", "env_timeout", "env_error", "inference_error", "inference_timeout",
    "reward_error", "cancelled", "internal",
]


@dataclass(frozen=True)
class EpisodeLimits:
    max_turns: int = 8
    max_episode_tokens: int = 2048
    max_tokens_per_turn: int = 256
    max_model_len: int = 2048
    temperature: float = 1.0
    top_p: float = 1.0
    generate_timeout_s: float = 300.0
    env_timeout_s: float = 60.0

    @classmethod
    def from_spec(
        cls, spec: JobSpec, temperature: float | None = None, **timeouts: float
    ) -> EpisodeLimits:
        return cls(
            max_turns=spec.max_turns,
            max_episode_tokens=spec.sampling.max_episode_tokens,
            max_tokens_per_turn=spec.sampling.max_tokens_per_turn,
            max_model_len=spec.model.max_model_len,
            temperature=spec.sampling.temperature if temperature is None else temperature,
            top_p=spec.sampling.top_p,
            **timeouts,
        )

    @property
    def token_budget(self) -> int:
        return min(self.max_episode_tokens, self.max_model_len)


@dataclass(frozen=True)
class EpisodeTask:
    """Which episode to run and where it belongs."""

    job_id: str
    env: str
    group_id: str
    group_size: int = 1
    sample_index: int = 0
    start_version: int = 0
    task_set: str = "default"
    task_id: str | None = None
    split: Literal["train", "eval"] = "train"
    seed: int | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class EpisodeResult:
    trajectory: Trajectory
    final_answer: str | None
    env_reward: float | None
    task_type: str


class _Failure(Exception):
    def __init__(self, status: TrajectoryStatus, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


@dataclass
class _State:
    """Everything an episode accumulates."""

    task: EpisodeTask
    token_ids: list[int] = field(default_factory=list)
    loss_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    spans: list[TurnSpan] = field(default_factory=list)
    turn_rewards: list[float] = field(default_factory=list)
    step_keys: list[str] = field(default_factory=list)
    timings: Timings = field(default_factory=Timings)
    session: SessionInfo | None = None
    prompt_length: int = 0
    status: TrajectoryStatus = TrajectoryStatus.OK
    error: EpisodeError | None = None
    final_answer: str | None = None
    env_reward: float | None = None
    calls_so_far: list[tuple[str, str]] = field(default_factory=list)
    last_key: str | None = None
    metadata: dict[str, object] = field(default_factory=dict)

    def add_template(self, ids: list[int]) -> None:
        self.token_ids += ids
        self.loss_mask += [0] * len(ids)
        self.logprobs += [0.0] * len(ids)
        self.versions += [0] * len(ids)

    def add_model(self, turn: int, out: GenerateResponse) -> None:
        start = len(self.token_ids)
        self.token_ids += out.token_ids
        self.loss_mask += [1] * len(out.token_ids)
        self.logprobs += out.logprobs
        self.versions += out.policy_versions
        self.spans.append(TurnSpan(turn=turn, start=start, end=len(self.token_ids)))

    def fail(self, failure: _Failure, turn: int | None) -> None:
        self.status = failure.status
        self.error = EpisodeError(kind=failure.kind, message=failure.message, turn=turn)

    def state_key(self) -> str:
        """Fallback GiGPO key when the env gives none: the task and the calls so far."""
        task_id = self.session.task.task_id if self.session else (self.task.task_id or "")
        payload = json.dumps([task_id, self.calls_so_far], sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


class EpisodeRunner:
    """Runs episodes against a generator and an environment server."""

    def __init__(
        self,
        chat: ChatTokenizer,
        generator: Generator,
        envs: EnvSessions,
        limits: EpisodeLimits,
    ) -> None:
        self.chat = chat
        self.generator = generator
        self.envs = envs
        self.limits = limits

    async def run(self, task: EpisodeTask) -> EpisodeResult:
        state = _State(task=task)
        turn: int | None = None
        try:
            await self._reset(state)
            for turn in range(self._max_turns(state)):
                if await self._turn(state, turn):
                    break
            else:
                state.status = TrajectoryStatus.TRUNCATED
                state.metadata["truncated_by"] = "max_turns"
        except _Failure as failure:
            state.fail(failure, turn)
        except asyncio.CancelledError:
            state.fail(_Failure(TrajectoryStatus.ABORTED, "cancelled", "episode cancelled"), turn)
            await self._close(state)
            raise
        except Exception as exc:  # a bug or an unexpected reply: still data
            log.exception("episode failed unexpectedly")
            state.fail(
                _Failure(TrajectoryStatus.ABORTED, "internal", f"{type(exc).__name__}: {exc}"),
                turn,
            )
        await self._close(state)
        return self._result(state)

    # ------------------------------------------------------------------ phases
    def _max_turns(self, state: _State) -> int:
        env_cap = state.session.max_turns if state.session else None
        return min(self.limits.max_turns, env_cap or self.limits.max_turns)

    async def _reset(self, state: _State) -> None:
        t = state.task
        request = SessionCreate(
            env=t.env, task_id=t.task_id, split=t.split, seed=t.seed, options=t.options
        )
        session = await self._env_call(state, self.envs.create_session(request), "reset")
        state.session = session
        if session.system_prompt:
            state.messages.append(Message(role="system", content=session.system_prompt))
        state.messages.append(Message(role="user", content=session.observation))
        state.add_template(self.chat.prompt_ids(state.messages, session.tools))
        state.prompt_length = len(state.token_ids)
        if state.prompt_length >= self.limits.token_budget:
            raise _Failure(
                TrajectoryStatus.TRUNCATED, "internal",
                f"the prompt ({state.prompt_length} tokens) fills the token budget "
                f"({self.limits.token_budget})",
            )

    async def _turn(self, state: _State, turn: int) -> bool:
        """One model turn (and its tool steps). Returns True when the episode is over."""
        out = await self._generate(state)
        state.add_model(turn, out)
        stopped = bool(out.token_ids) and self.chat.is_stop(out.token_ids[-1])
        text = self.chat.decode(out.token_ids[:-1] if stopped else out.token_ids)
        parsed = parse_tool_calls(text)
        state.messages.append(
            Message(
                role="assistant",
                content=text,
                tool_calls=parsed.tool_calls,
                tool_call_error=parsed.error,
            )
        )
        state.step_keys.append(self._key_before(state, turn))
        if out.finish_reason == FinishReason.ABORT:
            raise _Failure(TrajectoryStatus.ABORTED, "inference_error", "generation aborted")
        if not parsed.tool_calls and not parsed.malformed:
            return self._final_answer(state, text, stopped, out)
        observations, done = await self._act(state, parsed.tool_calls, parsed.error)
        return self._append_observations(state, observations, stopped, done)

    @staticmethod
    def _key_before(state: _State, turn: int) -> str:
        """The env state this turn acts from: the previous step's key, or the initial one."""
        return state.last_key or state.state_key()

    def _final_answer(
        self, state: _State, text: str, stopped: bool, out: GenerateResponse
    ) -> bool:
        state.final_answer = text.strip()
        state.turn_rewards.append(0.0)
        if out.finish_reason == FinishReason.LENGTH and not stopped:
            state.status = TrajectoryStatus.TRUNCATED
            state.metadata["truncated_by"] = "max_tokens"
        self._close_turn(state, stopped)
        return True

    async def _act(
        self, state: _State, calls: list[ToolCall], parse_error: str | None
    ) -> tuple[list[Message], bool]:
        """Run the turn's tool calls; a malformed call becomes an error observation."""
        if parse_error is not None:
            state.turn_rewards.append(0.0)
            text = f"Error: your tool call could not be parsed ({parse_error})."
            return [Message(role="tool", content=text, name="error")], False
        observations: list[Message] = []
        reward, done = 0.0, False
        for call in calls:
            result = await self._step(state, call)
            observations.append(
                Message(role="tool", content=result.observation, tool_call_id=call.id,
                        name=call.name)
            )
            reward += result.reward or 0.0
            if result.done:
                done = True
                self._on_done(state, result)
                break
        state.turn_rewards.append(reward)
        return observations, done

    def _on_done(self, state: _State, result: StepResult) -> None:
        answer = result.info.get("final_answer")
        state.final_answer = None if answer is None else str(answer)
        state.env_reward = result.reward
        if answer is None and result.info.get("truncated"):
            state.status = TrajectoryStatus.TRUNCATED
            state.metadata["truncated_by"] = "env_max_turns"

    def _append_observations(
        self, state: _State, observations: list[Message], stopped: bool, done: bool
    ) -> bool:
        ids = self.chat.continuation_ids(
            observations, stopped, state.session.tools if state.session else None,
            add_generation_prompt=not done,
        )
        limit = self.limits.max_model_len + 1 if done else self.limits.token_budget
        if len(state.token_ids) + len(ids) >= limit:
            if not done:
                state.status = TrajectoryStatus.TRUNCATED
                state.metadata["truncated_by"] = "token_budget"
            state.metadata["unsent_observations"] = [m.content for m in observations]
            self._close_turn(state, stopped)
            return True
        state.messages += observations
        state.add_template(ids)
        return done

    def _close_turn(self, state: _State, stopped: bool) -> None:
        """Append the template's turn closing (e.g. the newline after <|im_end|>)."""
        ids = self.chat.continuation_ids([], stopped, add_generation_prompt=False)
        if len(state.token_ids) + len(ids) <= self.limits.max_model_len:
            state.add_template(ids)

    # ------------------------------------------------------------------ calls
    async def _generate(self, state: _State) -> GenerateResponse:
        room = self.limits.token_budget - len(state.token_ids)
        if room <= 0:
            raise _Failure(TrajectoryStatus.TRUNCATED, "internal", "token budget exhausted")
        sampling = SamplingParams(
            max_tokens=min(self.limits.max_tokens_per_turn, room),
            temperature=self.limits.temperature,
            top_p=self.limits.top_p,
            stop_token_ids=self.chat.stop_token_ids,
        )
        start = time.perf_counter()
        try:
            return await asyncio.wait_for(
                self.generator.generate(list(state.token_ids), sampling, state.task.group_id),
                self.limits.generate_timeout_s,
            )
        except TimeoutError:
            raise _Failure(
                TrajectoryStatus.ABORTED, "inference_timeout",
                f"no generation within {self.limits.generate_timeout_s:g}s",
            ) from None
        except Exception as exc:
            raise _Failure(
                TrajectoryStatus.ABORTED, "inference_error", f"{type(exc).__name__}: {exc}"
            ) from None
        finally:
            state.timings.generation_s += time.perf_counter() - start

    async def _step(self, state: _State, call: ToolCall) -> StepResult:
        assert state.session is not None
        state.calls_so_far.append((call.name, json.dumps(call.arguments, sort_keys=True)))
        result = await self._env_call(
            state, self.envs.step(state.session.session_id, call), "step"
        )
        state.last_key = result.state_key or state.state_key()
        return result

    async def _env_call(self, state: _State, coro, what: str):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return await asyncio.wait_for(coro, self.limits.env_timeout_s)
        except TimeoutError:
            raise _Failure(
                TrajectoryStatus.ENV_ERROR, "env_timeout",
                f"environment {what} took longer than {self.limits.env_timeout_s:g}s",
            ) from None
        except NotFound as exc:
            raise _Failure(TrajectoryStatus.ENV_ERROR, "env_error", f"{what}: {exc}") from None
        except Exception as exc:
            kind: ErrorKind = "env_unavailable" if what == "reset" else "env_error"
            raise _Failure(
                TrajectoryStatus.ENV_ERROR, kind, f"{what}: {type(exc).__name__}: {exc}"
            ) from None
        finally:
            state.timings.env_s += time.perf_counter() - start

    async def _close(self, state: _State) -> None:
        if state.session is None:
            return
        session_id = state.session.session_id
        try:
            await asyncio.shield(asyncio.wait_for(self.envs.close_session(session_id), 5.0))
        except (Exception, asyncio.CancelledError) as exc:  # best effort: sessions expire
            log.debug("closing session %s failed: %r", session_id, exc)

    # ------------------------------------------------------------------ result
    def _result(self, state: _State) -> EpisodeResult:
        t, session = state.task, state.session
        state.timings.finished_at = time.time()
        traj = Trajectory(
            job_id=t.job_id,
            task_id=session.task.task_id if session else (t.task_id or ""),
            group_id=t.group_id,
            group_size=t.group_size,
            sample_index=t.sample_index,
            env=t.env,
            task_type=session.task.task_type if session else "",
            messages=state.messages,
            token_ids=state.token_ids,
            loss_mask=state.loss_mask,  # type: ignore[arg-type]
            behavior_logprobs=state.logprobs,
            policy_versions=state.versions,
            prompt_length=state.prompt_length,
            start_version=t.start_version,
            turn_rewards=state.turn_rewards or None,
            turn_spans=state.spans,
            step_keys=state.step_keys or None,
            status=state.status,
            error=state.error,
            timings=state.timings,
            metadata={**state.metadata, "task_set": t.task_set, "split": t.split},
        )
        return EpisodeResult(
            trajectory=traj,
            final_answer=state.final_answer,
            env_reward=state.env_reward,
            task_type=traj.task_type,
        )
