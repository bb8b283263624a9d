"""Settings of the reward service (env prefix `SLIPSTREAM_REWARD_`).

The same object configures the HTTP service and the in-process scorer that rollout
workers embed (`services.reward.scoring.score_items`).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator

from services.common.settings import ServiceSettings, service_settings_config

DEFAULT_RUBRIC = (
    "You are a strict grader. Judge whether the RESPONSE correctly and completely answers "
    "the QUESTION. When a REFERENCE answer is given, the response must agree with it in "
    "substance (wording may differ). Ignore style; penalise wrong facts, missing parts and "
    "unsupported claims. Think briefly, then end with a line of the form 'SCORE: N' where N "
    "is an integer from 0 (wrong) to 10 (fully correct)."
)

# Verifiers that wait on more than one thing get longer limits than default_timeout_s:
# sql runs two queries (sql_query_timeout_s each), code runs the sandbox
# (code_test_timeout_s), the judge may retry (judge_max_attempts x judge_request_timeout_s).
BUILTIN_TIMEOUTS: dict[str, float] = {"sql": 15.0, "code": 60.0, "llm_judge": 120.0}


class RewardSettings(ServiceSettings):
    model_config = service_settings_config("reward")
    service_name: ClassVar[str] = "reward"

    port: int = Field(8002, ge=0, le=65535, description="TCP port the HTTP server listens on.")

    # ------------------------------------------------------------------ scheduling
    max_concurrency: int = Field(
        8,
        ge=1,
        le=1024,
        description="Most items scored at the same time (also the size of "
        "the thread pool that runs blocking verifiers).",
    )
    max_pending_items: int = Field(
        4096,
        ge=1,
        description="Most items accepted but not yet scored; a batch that would "
        "exceed it is refused with 429 (back-pressure).",
    )
    default_timeout_s: float = Field(
        30.0,
        gt=0,
        description="Per-item time limit of a verifier without its own entry in "
        "`timeouts`. A verifier that runs past it yields ok=False, error 'timeout'.",
    )
    timeouts: dict[str, float] = Field(
        default_factory=dict,
        description="Per-verifier time limits in seconds, by verifier name, e.g. "
        '{"sql": 5}. They override the built-in ones (sql 15, code 60, llm_judge 120); '
        "other verifiers use default_timeout_s.",
    )

    # ------------------------------------------------------------------- verifiers
    exact_match_reward: Literal["em", "f1"] = Field(
        "em",
        description="What the exact_match verifier returns as reward: normalised exact "
        "match (0/1) or token F1; both are always in `details`.",
    )
    arithmetic_rel_tol: float = Field(
        1e-9, ge=0, description="Relative tolerance of the arithmetic verifier (0 = exact)."
    )
    sql_query_timeout_s: float = Field(
        5.0,
        gt=0,
        description="Time limit of one query (gold or predicted) in the sql verifier; a "
        "predicted query past it scores 0, a gold query past it is a verifier failure.",
    )
    sql_max_rows: int = Field(
        10_000,
        ge=1,
        description="Most rows a predicted or gold query may return before the "
        "sql verifier gives up on it.",
    )
    code_mode: Literal["auto", "tests", "env_reward"] = Field(
        "auto",
        description="code verifier: 'tests' re-runs the hidden tests in the sandbox; "
        "'env_reward' trusts the reward the code environment computed in its own sandbox; "
        "'auto' uses env_reward when the item carries one and runs the tests otherwise.",
    )
    code_test_timeout_s: float = Field(
        10.0, gt=0, description="Wall-clock limit of one sandboxed run of the hidden tests."
    )
    data_dir: str | None = Field(
        None, description="Where task sets are cached (default: $SLIPSTREAM_HOME/data)."
    )

    # ------------------------------------------------------------------- LLM judge
    judge_url: str = Field(
        "http://127.0.0.1:8001",
        description="Base URL of an OpenAI-compatible server that "
        "answers POST /v1/chat/completions (the inference service by default).",
    )
    judge_model: str = Field(
        "",
        description="`model` field sent to the judge server; empty means whatever model the "
        "Slipstream inference service serves (other OpenAI-compatible servers need a name).",
    )
    judge_api_key: str | None = Field(
        None, description="Bearer token for the judge server, if it needs one."
    )
    judge_rubric: str = Field(
        DEFAULT_RUBRIC,
        description="System prompt of the judge; it must ask for a final "
        "'SCORE: N' line on the 0..judge_max_score scale.",
    )
    judge_max_score: float = Field(
        10.0, gt=0, description="Top of the judge's score scale; rewards are score / max."
    )
    judge_max_attempts: int = Field(
        3,
        ge=1,
        le=10,
        description="Judge calls per item before an unparseable or failed "
        "verdict is recorded as a failure (ok=False).",
    )
    judge_request_timeout_s: float = Field(
        30.0, gt=0, description="Time limit of one HTTP call to the judge."
    )
    judge_max_tokens: int = Field(256, ge=1, description="max_tokens of a judge call.")
    judge_temperature: float = Field(0.0, ge=0, description="Sampling temperature of the judge.")

    @field_validator("timeouts")
    @classmethod
    def _positive(cls, value: dict[str, float]) -> dict[str, float]:
        bad = {k: v for k, v in value.items() if not v > 0}
        if bad:
            raise ValueError(f"time limits must be > 0 seconds: {bad}")
        return value

    def timeout_for(self, verifier: str) -> float:
        """The time limit of one item for `verifier`."""
        if verifier in self.timeouts:
            return self.timeouts[verifier]
        return BUILTIN_TIMEOUTS.get(verifier, self.default_timeout_s)
