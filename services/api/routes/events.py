"""`/v1/jobs/{id}/events`: the job's events as server-sent events.

Each event has `id:` (resume with the `Last-Event-ID` header or `?after=`), `event:`
(status, metrics or log) and `data:` (a JobEvent as JSON). The stream replays the job's
history after the given id, follows new events, and ends after the job's final status.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.concurrency import run_in_threadpool
from sse_starlette.sse import EventSourceResponse

from services.api.auth import Action, CurrentPrincipal
from services.api.routes import deps
from services.api.schemas import EventType, JobStatus
from services.api.store import JobStore

router = APIRouter(prefix="/v1/jobs/{job_id}", tags=["events"])


def _is_final(event_type: EventType, data: dict[str, Any]) -> bool:
    return event_type is EventType.STATUS and JobStatus(data["status"]).terminal


async def _follow(
    request: Request, store: JobStore, job_id: str, after: int, follow: bool, poll_s: float
) -> AsyncIterator[dict[str, Any]]:
    while True:
        events = await run_in_threadpool(store.events_after, job_id, after)
        for event in events:
            after = event.id
            yield {"id": str(event.id), "event": event.type.value, "data": event.model_dump_json()}
            if _is_final(event.type, event.data):
                return
        if events:
            continue  # a full page: there may be more right away
        if not follow or await request.is_disconnected():
            return
        if (await run_in_threadpool(store.status_of, job_id)).terminal:
            return  # resumed after the final event: nothing more will come
        await asyncio.sleep(poll_s)


@router.get("/events")
async def job_events(
    request: Request,
    principal: CurrentPrincipal,
    job_id: str,
    after: Annotated[int | None, Query(ge=0, description="Only events with a larger id.")] = None,
    follow: Annotated[bool, Query(description="Keep the stream open for new events.")] = True,
    last_event_id: Annotated[str | None, Header(description="SSE resume point.")] = None,
) -> EventSourceResponse:
    principal.require(Action.READ)
    store = deps.store(request)
    await run_in_threadpool(store.exists, job_id)
    start = after if after is not None else int(last_event_id or 0)
    settings = deps.settings(request)
    return EventSourceResponse(
        _follow(request, store, job_id, start, follow, settings.sse_poll_interval_s),
        ping=int(settings.sse_ping_s),
    )
