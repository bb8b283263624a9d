"""A tiny Llama whose weights are set by hand so that, after the chat template's
generation prompt, it writes one Hermes tool call and stops:

    <tool_call>{"name": "calculate", "arguments": {"expression": "6*7"}}</tool_call><|im_end|>

It is a second-order Markov model built from transformer parts: one-hot token codes in
the first half of the residual stream; in layer 0 a "previous token" attention head
(constant query/key biases whose rotary phases peak at a distance of one position) copies
the previous token's code into the second half; every other weight is zero; the untied LM
head scores the next token from (previous, current). The script is spelt with vocabulary
tokens chosen so that each (previous, current) pair determines the next token.

Served by the real inference service (hf engine) it makes real multi-turn episodes against
the real arithmetic environment, where a random-weight model never calls a tool.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SCRIPT = '<tool_call>{"name": "calculate", "arguments": {"expression": "6*7"}}</tool_call>'
MARGIN = 4.0  # LM-head weight: the scripted token wins by 8 * MARGIN * 2 logits
ATTN_SCALE = 300.0  # query bias: makes the previous-token head sharp
ROPE_PAIRS = 8  # rotary frequency pairs the previous-token head uses
MAX_TOKEN_CHARS = 12


Pair = tuple[int, int]


def _segmentations(text: str, vocab: dict[str, int], start: Pair, eos: int) -> Iterator[list[int]]:
    """Spellings of `text` as vocabulary tokens in which every (prev, cur) context has a
    single next token (including the start context and the final eos)."""
    byte_text = text.replace(" ", "\u0120").replace("\n", "\u010a")

    def search(pos: int, toks: list[int], table: dict[Pair, int]) -> Iterator[list[int]]:
        if pos == len(byte_text):
            key = (toks[-2], toks[-1])
            if table.get(key, eos) == eos:
                yield toks[2:]
            return
        for end in range(min(len(byte_text), pos + MAX_TOKEN_CHARS), pos, -1):
            tid = vocab.get(byte_text[pos:end])
            if tid is None or tid == eos:
                continue
            key = (toks[-2], toks[-1])
            if table.get(key, tid) != tid:
                continue
            yield from search(end, [*toks, tid], {**table, key: tid})

    yield from search(0, list(start), {})


def _additive_ok(chain: list[int]) -> bool:
    """logit[n] = a[n, cur] + b[n, prev] must single out the scripted next token."""
    by_cur: dict[int, set[int]] = {}
    by_prev: dict[int, set[int]] = {}
    for p, c, n in zip(chain, chain[1:], chain[2:], strict=False):
        by_cur.setdefault(c, set()).add(n)
        by_prev.setdefault(p, set()).add(n)
    for p, c, n in zip(chain, chain[1:], chain[2:], strict=False):
        if (by_cur[c] & by_prev[p]) - {n}:
            return False
    return True


def script_chain(tok: Any) -> list[int]:
    """[prompt's last two tokens, script tokens..., eos]."""
    start = tok.apply_chat_template(
        [{"role": "user", "content": "x"}], add_generation_prompt=True, tokenize=False
    )
    ids = tok(start, add_special_tokens=False)["input_ids"]
    ctx = (ids[-2], ids[-1])
    for spelling in _segmentations(SCRIPT, tok.get_vocab(), ctx, tok.eos_token_id):
        chain = [*ctx, *spelling, tok.eos_token_id]
        if _additive_ok(chain) and len(set(chain)) <= 64:
            assert tok.decode(spelling) == SCRIPT
            return chain
    raise RuntimeError("no spelling of the script is a second-order Markov chain")


def _set_weights(model: Any, chain: list[int], codes: dict[int, int]) -> None:
    import torch

    cfg = model.config
    half, head = cfg.hidden_size // 2, cfg.head_dim
    theta = cfg.rope_parameters["rope_theta"]
    with torch.no_grad():
        for param in model.parameters():
            param.zero_()
        model.model.norm.weight.fill_(1.0)
        for layer in model.model.layers:
            layer.input_layernorm.weight.fill_(1.0)
            layer.post_attention_layernorm.weight.fill_(1.0)
        attn = model.model.layers[0].self_attn
        for d in range(ROPE_PAIRS):  # score(r) = S * sum_d cos(theta_d * (r - 1))
            freq = theta ** (-2 * d / head)
            attn.q_proj.bias[d] = ATTN_SCALE
            attn.k_proj.bias[d] = math.cos(freq)
            attn.k_proj.bias[d + head // 2] = math.sin(freq)
        norm_gain = math.sqrt(cfg.hidden_size)  # RMSNorm of a one-hot vector
        for m in range(min(half, head)):
            attn.v_proj.weight[m, m] = 1.0
            attn.o_proj.weight[half + m, m] = 1.0 / norm_gain
        for token, code in codes.items():
            model.model.embed_tokens.weight[token, code] = 1.0
        for p, c, n in zip(chain, chain[1:], chain[2:], strict=False):
            model.lm_head.weight[n, codes[c]] = MARGIN
            model.lm_head.weight[n, half + codes[p]] = MARGIN


def build_scripted_model(tiny_model_path: Path, out: Path) -> Path:
    from transformers import AutoConfig, AutoTokenizer, LlamaForCausalLM

    tok = AutoTokenizer.from_pretrained(str(tiny_model_path))
    chain = script_chain(tok)
    config = AutoConfig.from_pretrained(str(tiny_model_path))
    config.tie_word_embeddings = False
    config.attention_bias = True
    model = LlamaForCausalLM(config)
    codes = {token: i for i, token in enumerate(dict.fromkeys(chain))}
    _set_weights(model, chain, codes)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    for item in tiny_model_path.iterdir():
        if item.name.startswith(("tokenizer", "chat_template", "special_tokens")):
            shutil.copy(item, out / item.name)
    return out
