"""llm_judge: ask an OpenAI-compatible chat server (the inference service) to grade the
answer against a rubric, and parse a 'SCORE: N' verdict.

Each item gets at most `max_attempts` calls; a transport error, an HTTP error or an
unparseable verdict uses one attempt. When all are used up the item is a recorded failure
(VerifierError -> ok=False with the reason), never a 0 passed off as a real grade.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

import httpx

from services.common.wire import ScoreItem
from services.reward.gold import GoldUnavailable, TaskLookup, gold_answers
from services.reward.verifiers.base import Verdict, Verifier, VerifierError
from services.reward.verifiers.extract import answer_text, last_assistant_text

log = logging.getLogger(__name__)

_SCORE_LINE = re.compile(r"score\s*[:=]\s*\**\s*(-?\d+(?:\.\d+)?)(?:\s*/\s*(\d+(?:\.\d+)?))?", re.I)
_JSON_SCORE = re.compile(r"\{[^{}]*\"score\"[^{}]*\}", re.I)


@dataclass(frozen=True)
class JudgeConfig:
    url: str
    model: str
    rubric: str
    max_score: float = 10.0
    max_attempts: int = 3
    request_timeout_s: float = 60.0
    max_tokens: int = 256
    temperature: float = 0.0
    api_key: str | None = None


def parse_verdict(text: str, max_score: float) -> float | None:
    """The grade in [0, 1] from a verdict ('SCORE: 7', 'Score: 7/10', '{"score": 7}'), or
    None when there is none or it is outside the scale."""
    value: float | None = None
    scale = max_score
    lines = _SCORE_LINE.findall(text)
    if lines:
        number, denominator = lines[-1]
        value, scale = float(number), float(denominator) if denominator else max_score
    else:
        for blob in reversed(_JSON_SCORE.findall(text)):
            try:
                raw = json.loads(blob).get("score")
            except (ValueError, AttributeError):
                continue
            if isinstance(raw, int | float) and not isinstance(raw, bool):
                value = float(raw)
                break
    if value is None or scale <= 0 or not 0 <= value <= scale:
        return None
    return value / scale


class JudgeVerifier(Verifier):
    name = "llm_judge"
    description = (
        "LLM judge: the inference service grades the answer against a rubric (and the gold "
        "answer when the task has one); parses 'SCORE: N'. Bounded retries; an unparseable "
        "verdict is a failure (ok=False)."
    )
    is_async = True

    def __init__(
        self,
        lookup: TaskLookup,
        config: JudgeConfig,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.lookup = lookup
        self.config = config
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            headers = (
                {"Authorization": f"Bearer {self.config.api_key}"} if self.config.api_key else None
            )
            self._client = httpx.AsyncClient(
                base_url=self.config.url.rstrip("/"),
                timeout=httpx.Timeout(self.config.request_timeout_s, connect=5.0),
                headers=headers,
                transport=self._transport,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def build_messages(self, item: ScoreItem) -> tuple[list[dict[str, str]], bool]:
        """The judge conversation, and whether a reference answer is in it."""
        question, references = _question_and_references(item, self.lookup)
        response = answer_text(item) or last_assistant_text(item) or ""
        parts = [f"QUESTION:\n{question}"]
        if references:
            parts.append("REFERENCE:\n" + "\n".join(references))
        parts.append(f"RESPONSE:\n{response}")
        user = "\n\n".join(parts)
        return [
            {"role": "system", "content": self.config.rubric},
            {"role": "user", "content": user},
        ], bool(references)

    async def _ask(self, messages: list[dict[str, str]]) -> str:
        body = {
            "model": self.config.model,
            "messages": messages,
            "max_tokens": self.config.max_tokens,
            "temperature": self.config.temperature,
        }
        response = await self._http().post("/v1/chat/completions", json=body)
        response.raise_for_status()
        content = response.json()["choices"][0]["message"].get("content")
        return content if isinstance(content, str) else ""

    async def ascore(self, item: ScoreItem) -> Verdict:
        if not (answer_text(item) or last_assistant_text(item)):
            return Verdict(0.0, {"answered": False, "attempts": 0})
        messages, has_reference = self.build_messages(item)
        problems: list[str] = []
        for attempt in range(1, self.config.max_attempts + 1):
            try:
                verdict = await self._ask(messages)
            except httpx.HTTPStatusError as exc:
                problems.append(f"attempt {attempt}: {_status_problem(exc.response)}")
                if exc.response.status_code in _FINAL_STATUSES:  # retrying cannot help
                    break
                continue
            except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as exc:
                problems.append(f"attempt {attempt}: {type(exc).__name__}: {exc}"[:300])
                continue
            grade = parse_verdict(verdict, self.config.max_score)
            if grade is not None:
                details = {
                    "attempts": attempt,
                    "verdict": verdict[-500:],
                    "reference": has_reference,
                }
                return Verdict(grade, details)
            problems.append(f"attempt {attempt}: unparseable verdict {verdict[-200:]!r}")
        raise VerifierError("judge gave no usable verdict; " + "; ".join(problems))


# Client errors that the same request would meet again (bad model name, bad auth, bad body).
_FINAL_STATUSES = {400, 401, 403, 404, 405, 413, 422}


def _status_problem(response: httpx.Response) -> str:
    try:
        body = response.json()
        message = body.get("message") or body.get("error") or body
    except ValueError:
        message = response.text
    return f"HTTP {response.status_code} from judge: {str(message)[:200]}"


def _question_and_references(item: ScoreItem, lookup: TaskLookup) -> tuple[str, list[str]]:
    try:
        task = lookup(item.env, item.task_set, item.task_id)
    except GoldUnavailable as exc:
        log.debug("judge without gold for %s: %s", item.task_id, exc)
        first_user = next((m.content for m in item.messages if m.role == "user"), "")
        return first_user, []
    return task.prompt, gold_answers(task)
