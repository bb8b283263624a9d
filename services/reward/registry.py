"""The default verifier registry, built from settings; every dependency injectable."""

from __future__ import annotations

import httpx

from services.reward.gold import TaskLookup, registry_lookup
from services.reward.settings import RewardSettings
from services.reward.verifiers.arithmetic import ArithmeticVerifier
from services.reward.verifiers.base import VerifierRegistry
from services.reward.verifiers.code import CodeRunner, CodeVerifier, sandbox_runner
from services.reward.verifiers.env_reward import EnvRewardVerifier
from services.reward.verifiers.exact_match import ExactMatchVerifier
from services.reward.verifiers.format import FormatVerifier
from services.reward.verifiers.judge import JudgeConfig, JudgeVerifier
from services.reward.verifiers.sql import DatabaseResolver, SqlVerifier, environment_databases


def judge_config(settings: RewardSettings) -> JudgeConfig:
    return JudgeConfig(
        url=settings.judge_url,
        model=settings.judge_model,
        rubric=settings.judge_rubric,
        max_score=settings.judge_max_score,
        max_attempts=settings.judge_max_attempts,
        request_timeout_s=settings.judge_request_timeout_s,
        max_tokens=settings.judge_max_tokens,
        temperature=settings.judge_temperature,
        api_key=settings.judge_api_key,
    )


def build_registry(
    settings: RewardSettings,
    *,
    lookup: TaskLookup | None = None,
    resolve_db: DatabaseResolver | None = None,
    code_runner: CodeRunner = sandbox_runner,
    judge_transport: httpx.AsyncBaseTransport | None = None,
) -> VerifierRegistry:
    """Every built-in verifier, keyed by the task type it scores."""
    lookup = lookup or registry_lookup(settings.data_dir)
    return VerifierRegistry(
        [
            ExactMatchVerifier(lookup, settings.exact_match_reward),
            ArithmeticVerifier(lookup, settings.arithmetic_rel_tol),
            SqlVerifier(
                lookup,
                resolve_db or environment_databases(settings.data_dir),
                query_timeout_s=settings.sql_query_timeout_s,
                max_rows=settings.sql_max_rows,
            ),
            CodeVerifier(
                lookup,
                code_runner,
                mode=settings.code_mode,
                run_timeout_s=settings.code_test_timeout_s,
            ),
            EnvRewardVerifier("web"),
            FormatVerifier(),
            JudgeVerifier(lookup, judge_config(settings), transport=judge_transport),
        ]
    )
