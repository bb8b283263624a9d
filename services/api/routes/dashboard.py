"""`/dashboard`: one self-contained HTML page (no CDN, no external fetches).

The page itself carries no data and needs no token; it asks for a token, keeps it in
localStorage and calls the `/v1` API with it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, RedirectResponse

router = APIRouter(tags=["dashboard"])
PAGE = Path(__file__).resolve().parent.parent / "static" / "dashboard.html"


@cache
def _page() -> str:
    return PAGE.read_text()


@router.get("/dashboard", response_class=HTMLResponse, include_in_schema=False)
def dashboard() -> HTMLResponse:
    return HTMLResponse(_page(), headers={"Cache-Control": "no-cache"})


@router.get("/", include_in_schema=False)
def root() -> RedirectResponse:
    return RedirectResponse("/dashboard")
