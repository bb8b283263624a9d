"""The browser backend for real pages: headless Debian Chromium (/usr/bin/chromium, never
a downloaded browser) driven by Playwright, with the same observation format as the text
backend. Used for MiniWoB++ tasks (PyPI `miniwob` HTML over file:// URLs).

Navigation is limited to localhost/*.localhost http(s) URLs and file:// URLs under the
allowed roots: `goto` refuses anything else, every other request is aborted by a route
handler, host names other than localhost do not resolve, and a click that lands outside
is undone.

Playwright's sync API is bound to the thread that started it, so one dedicated thread
owns the browser (`BrowserHost`); sessions submit their actions to it.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from environments.web.page import Element, Page
from environments.web.text_browser import ActionError

log = logging.getLogger(__name__)
T = TypeVar("T")

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost",
]
ACTION_TIMEOUT_MS = 5000

EXTRACT_JS = """
() => {
  const out = [];
  let n = 0;
  const skip = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE']);
  const hidden = new Set(['reward-display', 'sync-task-cover', 'click-canvas']);
  const clickable = 'a,button,input,select,textarea,option,[onclick],[role=button]';
  const visible = (el) => {
    const r = el.getBoundingClientRect(), s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
  };
  const roleOf = (el) => {
    const t = el.tagName, type = (el.getAttribute('type') || 'text').toLowerCase();
    if (t === 'A' || t === 'SPAN') return 'link';
    if (t === 'TEXTAREA') return 'textbox';
    if (t === 'SELECT') return 'combobox';
    if (t === 'OPTION') return 'option';
    if (t === 'INPUT') {
      if (type === 'checkbox' || type === 'radio') return type;
      if (['button', 'submit', 'reset'].includes(type)) return 'button';
      return 'textbox';
    }
    return 'button';
  };
  const labelOf = (el) => {
    if (el.labels && el.labels.length) return el.labels[0].innerText;
    return el.innerText || el.value || el.placeholder || el.getAttribute('aria-label') || '';
  };
  const walk = (node) => {
    for (const el of node.children) {
      if (skip.has(el.tagName) || hidden.has(el.id) || !visible(el)) continue;
      const pointer = getComputedStyle(el).cursor === 'pointer' &&
        !(el.parentElement && getComputedStyle(el.parentElement).cursor === 'pointer');
      if (el.matches(clickable) || pointer) {
        const role = roleOf(el);
        el.setAttribute('data-sid', ++n);
        out.push({id: n, role: role, text: labelOf(el).trim(),
                  value: role === 'textbox' ? el.value : null,
                  checked: (role === 'checkbox' || role === 'radio') ? el.checked : null});
        if (role === 'link' || role === 'button') continue;
      } else {
        const own = Array.from(el.childNodes).filter((c) => c.nodeType === 3)
          .map((c) => c.textContent.trim()).filter((x) => x).join(' ');
        if (own) {
          el.setAttribute('data-sid', ++n);
          out.push({id: n, role: /^H[1-6]$/.test(el.tagName) ? 'heading' : 'text', text: own});
        }
      }
      walk(el);
    }
  };
  walk(document.body);
  return out;
}
"""


def miniwob_root() -> Path | None:
    """The `miniwob` package's HTML folder (located without importing the package)."""
    spec = importlib.util.find_spec("miniwob")
    if spec is None or spec.origin is None:
        return None
    root = Path(spec.origin).parent / "html"
    return root if root.is_dir() else None


def is_allowed(url: str, roots: list[Path]) -> bool:
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        host = parts.hostname or ""
        return host in ("localhost", "127.0.0.1") or host.endswith(".localhost")
    if parts.scheme == "file":
        path = Path(parts.path).resolve()
        return any(path.is_relative_to(root.resolve()) for root in roots)
    return parts.scheme in ("about", "data") and url in ("about:blank",)


class BrowserHost:
    """One headless Chromium per server, owned by a single thread."""

    def __init__(self, roots: list[Path], executable: str = CHROMIUM) -> None:
        self.roots = roots
        self.executable = executable
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="chromium")
        self._playwright: Any = None
        self._browser: Any = None

    def call(self, fn: Callable[..., T], *args: Any, timeout: float = 30.0) -> T:
        return self._thread.submit(fn, *args).result(timeout)

    def _ensure(self) -> Any:
        if self._browser is None:
            from playwright.sync_api import sync_playwright

            self._playwright = sync_playwright().start()
            self._browser = self._playwright.chromium.launch(
                executable_path=self.executable, headless=True, args=LAUNCH_ARGS
            )
            log.info("chromium started: %s", self._browser.version)
        return self._browser

    def new_session(self) -> ChromiumSession:
        return self.call(self._open)

    def _open(self) -> ChromiumSession:
        context = self._ensure().new_context(java_script_enabled=True, accept_downloads=False)
        roots = self.roots

        def guard(route: Any) -> None:
            if is_allowed(route.request.url, roots):
                route.continue_()
            else:
                route.abort("blockedbyclient")

        context.route("**/*", guard)
        page = context.new_page()
        page.set_default_timeout(ACTION_TIMEOUT_MS)
        return ChromiumSession(self, context, page)

    def close(self) -> None:
        def stop() -> None:
            if self._browser is not None:
                self._browser.close()
                self._playwright.stop()
                self._browser = self._playwright = None

        try:
            self.call(stop, timeout=30)
        finally:
            self._thread.shutdown(wait=False)


class ChromiumSession:
    """One tab; the `Backend` interface (observe/goto/click/type/back/close)."""

    def __init__(self, host: BrowserHost, context: Any, page: Any) -> None:
        self.host = host
        self.context = context
        self.tab = page
        self.notice: str | None = None

    # every method hops onto the browser thread
    def observe(self) -> Page:
        return self.host.call(self._observe)

    def goto(self, url: str) -> None:
        if not is_allowed(url, self.host.roots):
            raise ActionError(f"navigation to {url!r} is blocked (local pages only)")
        self.host.call(self.tab.goto, url)

    def click(self, eid: int) -> None:
        self.host.call(self._act, eid, lambda loc: loc.click())

    def type(self, eid: int, text: str) -> None:
        def fill(loc: Any) -> None:
            loc.fill(text.rstrip("\n"))
            if text.endswith("\n"):
                loc.press("Enter")

        self.host.call(self._act, eid, fill)

    def back(self) -> None:
        self.host.call(self.tab.go_back)

    def evaluate(self, script: str) -> Any:
        return self.host.call(self.tab.evaluate, script)

    def close(self) -> None:
        try:
            self.host.call(self.context.close, timeout=10)
        except Exception as exc:  # the browser may be gone already
            log.debug("closing a chromium context failed: %s", exc)

    # ---------------------------------------------------- on the browser thread

    def _act(self, eid: int, action: Callable[[Any], None]) -> None:
        loc = self.tab.locator(f'[data-sid="{int(eid)}"]')
        if loc.count() == 0:
            raise ActionError(f"there is no element [{eid}] on this page")
        before = self.tab.url
        action(loc.first)
        if not is_allowed(self.tab.url, self.host.roots):
            self.tab.goto(before)
            self.notice = "Navigation outside the local pages was blocked."

    def _observe(self) -> Page:
        items = self.tab.evaluate(EXTRACT_JS)
        elements = [
            Element(
                it["id"],
                it["role"],
                it["text"] or "",
                value=it.get("value"),
                checked=it.get("checked"),
            )
            for it in items
        ]
        page = Page(self.tab.url, self.tab.title(), elements, self.notice)
        self.notice = None
        return page
