"""The observation format both backends share: a page as an accessibility-tree-like list
of elements with ids, plus its URL and title, rendered as compact text with a viewport."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

VIEWPORT = 30  # elements shown at once; scroll moves by this much


@dataclass
class Element:
    """One element the agent sees. `action` is backend data (never rendered)."""

    eid: int
    role: str  # link | button | textbox | radio | checkbox | heading | text | option
    text: str
    value: str | None = None  # textbox content
    checked: bool | None = None  # radio/checkbox state
    action: Any = None

    @property
    def interactive(self) -> bool:
        return self.role in ("link", "button", "textbox", "radio", "checkbox", "option")

    def render(self) -> str:
        text = self.text.replace("\n", " ").strip()
        line = f"[{self.eid}] {self.role} {text!r}" if text else f"[{self.eid}] {self.role}"
        if self.value is not None:
            line += f" value={self.value!r}"
        if self.checked is not None:
            line += " (selected)" if self.checked else ""
        return line


@dataclass
class Page:
    url: str
    title: str
    elements: list[Element] = field(default_factory=list)
    notice: str | None = None  # e.g. "Navigation blocked", "Choose a size first"

    def element(self, eid: int) -> Element | None:
        for el in self.elements:
            if el.eid == eid:
                return el
        return None


def render(page: Page, offset: int = 0, viewport: int = VIEWPORT) -> str:
    """URL, title, an optional notice and the visible window of elements."""
    lines = [f"URL: {page.url}", f"Title: {page.title}"]
    if page.notice:
        lines.append(f"Notice: {page.notice}")
    total = len(page.elements)
    window = page.elements[offset : offset + viewport]
    lines += [el.render() for el in window]
    if total > viewport:
        first, last = offset + 1, offset + len(window)
        more = []
        if offset > 0:
            more.append("scroll up for more")
        if last < total:
            more.append("scroll down for more")
        lines.append(f"[elements {first}-{last} of {total}; {', '.join(more)}]")
    elif not total:
        lines.append("(empty page)")
    return "\n".join(lines)


class PageBuilder:
    """Appends elements with sequential ids."""

    def __init__(self, url: str, title: str) -> None:
        self.page = Page(url, title)

    def add(self, role: str, text: str, action: Any = None, **kw: Any) -> Element:
        el = Element(len(self.page.elements) + 1, role, text, action=action, **kw)
        self.page.elements.append(el)
        return el

    def link(self, text: str, url: str) -> Element:
        return self.add("link", text, ("goto", url))

    def button(self, text: str, action: Callable[..., Any] | tuple[str, str]) -> Element:
        return self.add("button", text, action)

    def text(self, text: str) -> Element:
        return self.add("text", text)
