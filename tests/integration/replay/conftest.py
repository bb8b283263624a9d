from __future__ import annotations

from collections.abc import Iterator

import pytest
from replay_fixtures import backend_store, redis_available, serve_app

from services.replay.app import create_app
from services.replay.client import ReplayClient
from services.replay.settings import ReplaySettings

KINDS = ["memory", "redis", "http-memory", "http-redis"]


def _needs_redis(kind: str) -> None:
    if "redis" in kind and not redis_available():
        pytest.skip("no Redis at 127.0.0.1:6379")


@pytest.fixture(params=KINDS)
def store_factory(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """Builds a store (or an HTTP client over one) with the given limits."""
    kind: str = request.param
    _needs_redis(kind)
    stack: list = []

    def build(**limits: object):  # type: ignore[no-untyped-def]
        cm = backend_store(kind.removeprefix("http-"), **limits)
        store = cm.__enter__()
        stack.append(cm)
        if not kind.startswith("http"):
            return store
        app = create_app(ReplaySettings(take_poll_s=0.01), store=store)
        served = serve_app(app)
        client = ReplayClient(served.__enter__(), retries=0)
        stack.append(served)
        stack.append(client)
        return client

    yield build
    for item in reversed(stack):
        item.__exit__(None, None, None)


@pytest.fixture
def store(store_factory):  # type: ignore[no-untyped-def]
    return store_factory()


@pytest.fixture
def job_id() -> Iterator[str]:
    import uuid

    yield f"job-{uuid.uuid4().hex[:8]}"

