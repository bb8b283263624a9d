"""Typed httpx client base: a timeout on every call, bounded retries on transient faults,
and server errors turned back into the typed errors they were raised as."""

from __future__ import annotations

import logging
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel
from tenacity import (
    AsyncRetrying,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from services.common.errors import (
    BadRequest,
    Conflict,
    Forbidden,
    NotFound,
    NotReady,
    Overloaded,
    SlipstreamError,
    Unauthorized,
    UpstreamError,
)

Model = TypeVar("Model", bound=BaseModel)
log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)
_BY_STATUS: dict[int, type[SlipstreamError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    422: BadRequest,
    429: Overloaded,
    503: NotReady,
}
# Safe to repeat: the request never reached the handler, or the server asked us to back off.
_TRANSIENT_STATUSES = {429, 502, 503, 504}


class ServiceUnavailable(UpstreamError):
    """The service could not be reached at all: says where we tried and what to do."""


def _is_transient(exc: BaseException) -> bool:
    if isinstance(exc, httpx.TransportError):
        return True
    return isinstance(exc, httpx.HTTPStatusError) and (
        exc.response.status_code in _TRANSIENT_STATUSES
    )


def _typed_error(response: httpx.Response) -> SlipstreamError:
    try:
        body = response.json()
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    message = body.get("message") or body.get("detail") or response.text[:500]
    if not isinstance(message, str):
        message = str(message)
    cls = _BY_STATUS.get(response.status_code, UpstreamError)
    return cls(f"{response.request.url.path}: {message}", field=body.get("field"))


class _ClientCore:
    def __init__(self, base_url: str, retries: int) -> None:
        self.base_url = base_url.rstrip("/")
        self.retries = retries

    def _retry_policy(self) -> dict[str, Any]:
        return {
            "stop": stop_after_attempt(self.retries + 1),
            "wait": wait_exponential(multiplier=0.2, max=2.0),
            "retry": retry_if_exception(_is_transient),
            "reraise": True,
        }

    def _unavailable(self, exc: httpx.TransportError) -> ServiceUnavailable:
        return ServiceUnavailable(
            f"cannot reach {self.base_url} ({type(exc).__name__}: {exc}); "
            "is the service running? `slipstream status` lists what is up."
        )

    @staticmethod
    def _check(response: httpx.Response) -> httpx.Response:
        if response.status_code in _TRANSIENT_STATUSES:
            response.raise_for_status()  # lets the retry policy see it
        if response.is_error:
            raise _typed_error(response)
        return response


class ServiceClient(_ClientCore):
    """Synchronous client. Subclasses add typed methods built on `_request`."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        retries: int = 2,
        headers: dict[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(base_url, retries)
        self.http = httpx.Client(
            base_url=self.base_url, timeout=timeout, headers=headers, transport=transport
        )

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            for attempt in Retrying(**self._retry_policy()):
                with attempt:
                    return self._check(self.http.request(method, path, **kwargs))
        except httpx.TransportError as exc:
            raise self._unavailable(exc) from exc
        except httpx.HTTPStatusError as exc:
            raise _typed_error(exc.response) from exc
        raise AssertionError("unreachable")

    def _get_model(self, path: str, model: type[Model], **kwargs: Any) -> Model:
        return model.model_validate(self._request("GET", path, **kwargs).json())

    def _post_model(
        self, path: str, body: BaseModel | None, model: type[Model], **kwargs: Any
    ) -> Model:
        payload = body.model_dump(mode="json") if body is not None else None
        return model.model_validate(self._request("POST", path, json=payload, **kwargs).json())

    def healthy(self) -> bool:
        try:
            return self.http.get("/healthz", timeout=2.0).status_code == 200
        except httpx.HTTPError:
            return False

    def close(self) -> None:
        self.http.close()

    def __enter__(self):  # type: ignore[no-untyped-def]
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncServiceClient(_ClientCore):
    """Asynchronous twin of ServiceClient, for the rollout loop and other async callers."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        retries: int = 2,
        headers: dict[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        max_connections: int = 256,
    ) -> None:
        super().__init__(base_url, retries)
        self.http = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=timeout,
            headers=headers,
            transport=transport,
            limits=httpx.Limits(max_connections=max_connections),
        )

    async def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            async for attempt in AsyncRetrying(**self._retry_policy()):
                with attempt:
                    return self._check(await self.http.request(method, path, **kwargs))
        except httpx.TransportError as exc:
            raise self._unavailable(exc) from exc
        except httpx.HTTPStatusError as exc:
            raise _typed_error(exc.response) from exc
        raise AssertionError("unreachable")

    async def _get_model(self, path: str, model: type[Model], **kwargs: Any) -> Model:
        return model.model_validate((await self._request("GET", path, **kwargs)).json())

    async def _post_model(
        self, path: str, body: BaseModel | None, model: type[Model], **kwargs: Any
    ) -> Model:
        payload = body.model_dump(mode="json") if body is not None else None
        response = await self._request("POST", path, json=payload, **kwargs)
        return model.model_validate(response.json())

    async def healthy(self) -> bool:
        try:
            return (await self.http.get("/healthz", timeout=2.0)).status_code == 200
        except httpx.HTTPError:
            return False

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self):  # type: ignore[no-untyped-def]
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
