"""The default, in-process backend: a text browser over the local shop (no Chromium)."""

from __future__ import annotations

from environments.web.page import Page
from environments.web.shop import ShopSite, ShopState, url_for


class ActionError(ValueError):
    """The action cannot be done on this page (shown to the agent)."""


class TextBrowser:
    """Navigation, clicks, typing and history over `ShopSite`; the visitor's cart and
    orders live in `state`."""

    def __init__(self, site: ShopSite, start_url: str | None = None) -> None:
        self.site = site
        self.state = ShopState()
        self.history: list[str] = []
        self.page: Page = site.render(start_url or url_for("/"), self.state)

    def observe(self) -> Page:
        return self.page

    def goto(self, url: str) -> None:
        page = self.site.render(url, self.state)  # raises NotLocal before anything changes
        self.history.append(self.page.url)
        self.page = page

    def back(self) -> None:
        if not self.history:
            raise ActionError("there is no previous page")
        self.page = self.site.render(self.history.pop(), self.state)

    def click(self, eid: int) -> None:
        el = self.page.element(eid)
        if el is None:
            raise ActionError(f"there is no element [{eid}] on this page")
        if el.action is None:
            raise ActionError(f"[{eid}] is a {el.role}; clicking it does nothing")
        if isinstance(el.action, tuple) and el.action[0] == "goto":
            self.goto(el.action[1])
        else:
            self.goto(el.action(self.state))

    def type(self, eid: int, text: str) -> None:
        el = self.page.element(eid)
        if el is None or el.role != "textbox":
            raise ActionError(f"[{eid}] is not a text box")
        el.value = text.rstrip("\n")
        if text.endswith("\n"):  # Enter submits the form: the button after the box
            button = self.page.element(eid + 1)
            if button is not None and button.role == "button":
                self.click(button.eid)

    def close(self) -> None:
        """Nothing to release."""
