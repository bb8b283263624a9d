"""The web environment: a local shop rendered as text (default, no browser) and a few
MiniWoB++ pages in headless Chromium, behind the same tools and observation format.

Tools: goto(url), click(element_id), type(element_id, text), back(), scroll(direction),
finish(answer). Options (`env_options["web"]`): `catalog_seed` (default 0),
`chromium` (path, default /usr/bin/chromium).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal, Protocol

from environments.base import EnvContext, Environment
from environments.tasks import TaskSet
from environments.tools import Final, ToolFailure, tool
from environments.web import grading
from environments.web import tasks as web_tasks
from environments.web.catalog import Catalog, generate_catalog
from environments.web.page import VIEWPORT, Page, render
from environments.web.shop import NotLocal, ShopSite
from environments.web.text_browser import ActionError, TextBrowser

log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You operate a web browser through tools. Each observation lists the page's elements "
    "as [id] role 'text'. Use click(element_id), type(element_id, text) (end the text "
    "with a newline to press Enter), goto(url), back() and scroll('up'|'down'); call "
    "finish(answer) when the task is done (answer the question, or 'done')."
)


class Backend(Protocol):
    def observe(self) -> Page: ...
    def goto(self, url: str) -> None: ...
    def click(self, eid: int) -> None: ...
    def type(self, eid: int, text: str) -> None: ...
    def back(self) -> None: ...
    def close(self) -> None: ...


@dataclass
class WebShared:
    """Built once per server: the catalog and site; Chromium only when first needed."""

    catalog: Catalog
    site: ShopSite
    chromium: str = "/usr/bin/chromium"
    _browser: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def browser(self) -> Any:
        from environments.web.chromium import BrowserHost, miniwob_root

        with self._lock:
            if self._browser is None:
                root = miniwob_root()
                if root is None:
                    raise RuntimeError("MiniWoB++ pages need the PyPI package 'miniwob'")
                self._browser = BrowserHost([root], self.chromium)
            return self._browser


class WebEnvironment(Environment):
    name = "web"
    description = (
        "A local web shop (1,200 generated products; search, product options, cart, checkout) "
        "rendered as text, plus MiniWoB++ pages in headless Chromium."
    )
    task_type = "web"
    task_set_names: ClassVar[tuple[str, ...]] = ("default", "miniwob")
    task_set_version = "1"
    max_turns = 30

    @classmethod
    def build_task_set(cls, name: str, seed: int, ctx: EnvContext) -> TaskSet:
        if name == "miniwob":
            return web_tasks.generate_miniwob(name, seed, cls.task_set_version)
        catalog = generate_catalog(int(ctx.options.get("catalog_seed", 0)))
        return web_tasks.generate_shop(name, seed, cls.task_set_version, catalog)

    @classmethod
    def load_shared(cls, ctx: EnvContext) -> WebShared:
        catalog = generate_catalog(int(ctx.options.get("catalog_seed", 0)))
        return WebShared(
            catalog, ShopSite(catalog), ctx.options.get("chromium", "/usr/bin/chromium")
        )

    @classmethod
    def close_shared(cls, shared: WebShared) -> None:
        if shared._browser is not None:
            shared._browser.close()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.backend: Backend | None = None
        self.offset = 0
        self.instruction = str(self.task.metadata.get("instruction", ""))

    @property
    def web(self) -> WebShared:
        return self.shared

    def system_prompt(self) -> str:
        return SYSTEM_PROMPT

    def reset(self) -> str:
        if self.task.metadata.get("backend") == "browser":
            self.backend = self._open_miniwob()
            return f"Task: {self.instruction}\n\n{self._observation()}"
        self.backend = TextBrowser(self.web.site)
        return f"{self.task.prompt}\n\n{self._observation()}"

    def _open_miniwob(self) -> Backend:
        from environments.web.chromium import miniwob_root

        session = self.web.browser().new_session()
        name, seed = self.task.metadata["miniwob"], int(self.task.metadata["seed"])
        session.goto((miniwob_root() / "miniwob" / f"{name}.html").as_uri())  # type: ignore[operator]
        self.instruction = session.evaluate(
            f"core.EPISODE_MAX_TIME = 3600000; Math.seedrandom('{seed}'); "
            "core.startEpisodeReal(); core.getUtterance()"
        )
        return session

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()

    def _observation(self) -> str:
        assert self.backend is not None
        return render(self.backend.observe(), self.offset)

    def _do(self, action: Any, *args: Any) -> str:
        try:
            action(*args)
        except NotLocal as exc:
            raise ToolFailure(str(exc), kind="refused") from None
        except ActionError as exc:
            message = str(exc)
            kind = "refused" if "blocked" in message else "tool_error"
            raise ToolFailure(f"{message}\n\n{self._observation()}", kind=kind) from None
        self.offset = 0
        return self._observation()

    # ------------------------------------------------------------------ tools

    @tool("Open a URL of the local site (e.g. http://shop.localhost/search?q=boots).")
    def goto(self, url: Annotated[str, "The URL to open."]) -> str:
        return self._do(self.backend.goto, url)  # type: ignore[union-attr]

    @tool("Click the element with this id (a link, button, radio button or checkbox).")
    def click(self, element_id: Annotated[int, "The [id] shown before the element."]) -> str:
        return self._do(self.backend.click, element_id)  # type: ignore[union-attr]

    @tool("Type text into a text box (replacing its content); end with a newline to submit.")
    def type(
        self,
        element_id: Annotated[int, "The [id] of the text box."],
        text: Annotated[str, "The text to enter."],
    ) -> str:
        return self._do(self.backend.type, element_id, text)  # type: ignore[union-attr]

    @tool("Go back to the previous page.")
    def back(self) -> str:
        return self._do(self.backend.back)  # type: ignore[union-attr]

    @tool("Scroll the list of elements up or down by one screen.")
    def scroll(self, direction: Annotated[Literal["up", "down"], "'up' or 'down'."]) -> str:
        assert self.backend is not None
        total = len(self.backend.observe().elements)
        step = VIEWPORT if direction == "down" else -VIEWPORT
        self.offset = max(0, min(self.offset + step, max(0, total - VIEWPORT)))
        return self._observation()

    @tool(
        "Finish the episode with your answer (the answer to a question, or 'done' after "
        "completing a purchase or page task).",
        final=True,
    )
    def finish(self, answer: Annotated[str, "Your final answer."] = "done") -> Final:
        reward, info = self._grade(answer)
        return Final(
            answer=answer,
            reward=reward,
            info=info,
            observation=f"Finished (reward {reward:.2f}). The episode is over.",
        )

    def _grade(self, answer: str) -> tuple[float, dict[str, Any]]:
        kind = self.task.gold.get("kind")
        if kind == "buy":
            assert isinstance(self.backend, TextBrowser)
            reward, detail = grading.buy_reward(
                self.task.gold["goal"], self.backend.state, self.web.catalog
            )
            return reward, {"kind": kind, **detail}
        if kind == "info":
            compare = self.task.gold["compare"]
            return grading.info_reward(compare, self.task.answer or "", answer), {"kind": kind}
        done, raw = self.backend.evaluate("[WOB_DONE_GLOBAL, WOB_RAW_REWARD_GLOBAL]")  # type: ignore[union-attr]
        return (1.0 if done and raw > 0 else 0.0), {
            "kind": kind,
            "raw_reward": raw,
            "page_done": done,
        }
