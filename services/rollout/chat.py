"""Incremental token building with the model's chat template.

The rollout loop never decodes-and-re-encodes model output. It tokenizes only text it
writes itself: the initial prompt, and after each model turn the *template continuation*
(the turn's closing, the observation turn, the next generation prompt). The continuation
is found by rendering a sentinel assistant turn followed by the new messages and slicing
after the sentinel, so it is exactly what the template would put there.

Assistant messages keep the raw sampled text as `content` (tool-call markup included), so
`render_transcript(messages)` reproduces `decode(token_ids)` of a finished episode.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.common.wire import Message, ToolSpec

SENTINEL = "\u27e6slipstream-sentinel\u27e7"


def _template_dict(message: Message) -> dict[str, Any]:
    return {"role": message.role, "content": message.content}


class ChatTokenizer:
    """A HF tokenizer plus the chat-template arithmetic the episode runner needs."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        stop = {tokenizer.eos_token_id}
        im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
        if isinstance(im_end, int) and im_end != tokenizer.unk_token_id:
            stop.add(im_end)
        self.stop_token_ids: list[int] = sorted(t for t in stop if t is not None)
        self._stop_texts = [self.decode([t]) for t in self.stop_token_ids]

    @classmethod
    def from_pretrained(cls, name_or_path: str) -> ChatTokenizer:
        from transformers import AutoTokenizer

        return cls(AutoTokenizer.from_pretrained(name_or_path))

    # ------------------------------------------------------------------ text
    def render(
        self,
        messages: Sequence[Message | dict[str, Any]],
        tools: Sequence[ToolSpec] | None = None,
        add_generation_prompt: bool = False,
    ) -> str:
        dicts = [_template_dict(m) if isinstance(m, Message) else m for m in messages]
        return self.tokenizer.apply_chat_template(
            dicts,
            tools=[t.model_dump() for t in tools] if tools else None,
            add_generation_prompt=add_generation_prompt,
            tokenize=False,
        )

    def render_transcript(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None
    ) -> str:
        """The text a finished episode's token_ids decode to."""
        return self.render(messages, tools, add_generation_prompt=False)

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(
            list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False
        )

    # ------------------------------------------------------------------ tokens
    def prompt_ids(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None
    ) -> list[int]:
        """Tokens of the initial prompt, ending with the generation prompt."""
        return self.encode(self.render(messages, tools, add_generation_prompt=True))

    def continuation_ids(
        self,
        new_messages: Sequence[Message],
        model_stopped: bool,
        tools: Sequence[ToolSpec] | None = None,
        add_generation_prompt: bool = True,
    ) -> list[int]:
        """Template tokens that follow a model turn: its closing (minus the stop token the
        model already sampled, if it did), `new_messages`, and the next generation prompt."""
        sentinel = Message(role="assistant", content=SENTINEL)
        text = self.render([sentinel, *new_messages], tools, add_generation_prompt)
        tail = text[text.index(SENTINEL) + len(SENTINEL) :]
        if model_stopped:
            for stop in self._stop_texts:
                if stop and tail.startswith(stop):
                    tail = tail[len(stop) :]
                    break
        return self.encode(tail) if tail else []

    def is_stop(self, token_id: int) -> bool:
        return token_id in self.stop_token_ids
