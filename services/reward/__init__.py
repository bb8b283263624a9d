"""Slipstream reward service: verifiers behind `POST /v1/score`.

- `scoring.Scorer`: items go to the verifier of their `task_type` (explicit registry in
  `registry.build_registry`), concurrently (`max_concurrency`), each under its verifier's
  time limit. Failures (unknown type, missing gold, verifier error, timeout, unparseable
  judge verdict) come back as `ScoreResult(ok=False, error=...)`, never as a silent 0.
- Verifiers (`verifiers/`): exact_match (SQuAD EM, F1 in details), arithmetic (numeric
  value), sql (execution match on the task's database, read-only), code (hidden tests in
  the code environment's sandbox, or its env_reward per `code_mode`), web (env_reward of
  the graded finish), format (final answer + well-formed tool calls), llm_judge (rubric
  grading by an OpenAI-compatible server, bounded retries).
- Gold answers are looked up by the verifiers (`gold.registry_lookup`, i.e.
  `environments.registry.get_task`); the agent never sends them.
- Embedded use without the service: `scoring.score_items(items, settings)` (sync) or
  `await scoring.ascore_items(...)`, or keep a `Scorer`. Over HTTP: `client.RewardClient`
  / `client.AsyncRewardClient`.
"""
