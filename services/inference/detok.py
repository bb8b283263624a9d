"""Incremental detokenization for streaming: turn a growing list of token ids into text
deltas that never split a UTF-8 character, never show part of a stop string, and (when
tools are on) hold back everything from `<tool_call>` on so it can be parsed at the end."""

from __future__ import annotations

from typing import Any

from services.inference.toolcalls import OPEN_TAG


class TextStream:
    def __init__(self, tokenizer: Any, stop: list[str] | None = None, hold_tools: bool = False):
        self.tokenizer = tokenizer
        self.stop = [s for s in (stop or []) if s]
        self.hold_tools = hold_tools
        self.token_ids: list[int] = []
        self.text = ""
        self.sent = 0
        self.stopped = False

    def feed(self, token_ids: list[int]) -> str:
        """Add tokens; return the text that is now safe to show."""
        if self.stopped:
            return ""
        self.token_ids.extend(token_ids)
        self.text = self.tokenizer.decode(self.token_ids, skip_special_tokens=True)
        self._apply_stop()
        return self._emit(self._safe_end())

    def rest(self) -> str:
        """At the end: everything not yet shown (tool-call text included)."""
        return self._emit(len(self.text))

    def cut(self, text: str) -> str:
        """`text` up to (not including) the first stop string."""
        cuts = [i for i in (text.find(s) for s in self.stop) if i >= 0]
        return text[: min(cuts)] if cuts else text

    def _apply_stop(self) -> None:
        cut = self.cut(self.text)
        if len(cut) < len(self.text):
            self.text = cut
            self.stopped = True

    def _safe_end(self) -> int:
        end = len(self.text.rstrip("\ufffd"))
        if self.stop and not self.stopped:
            end = min(end, len(self.text) - max(len(s) for s in self.stop) + 1)
        if self.hold_tools:
            tag = self.text.find(OPEN_TAG)
            end = min(end, tag) if tag >= 0 else min(end, _partial_tag_start(self.text))
        return end

    def _emit(self, end: int) -> str:
        if end <= self.sent:
            return ""
        delta = self.text[self.sent : end]
        self.sent = end
        return delta


def _partial_tag_start(text: str) -> int:
    """Where a possible beginning of `<tool_call>` starts at the end of `text`."""
    for size in range(min(len(OPEN_TAG) - 1, len(text)), 0, -1):
        if OPEN_TAG.startswith(text[-size:]):
            return len(text) - size
    return len(text)
