"""The policy model: loading (optionally with LoRA), per-token logprobs and entropy, and
the HF-named weights that inference loads."""

from __future__ import annotations

import logging
from pathlib import Path

import torch
from torch import Tensor, nn

from learner.algorithms.losses import entropy_from_logits
from learner.batching import MicroBatch

log = logging.getLogger(__name__)

_PEFT_PREFIX = "base_model.model."


def resolve_model_path(name: str) -> str:
    """A prepared model name -> its local folder (prepared on first use); paths pass."""
    try:
        from services.inference.models import resolve_model
    except ImportError:  # inference package not installed alongside: paths only
        return name
    return resolve_model(name)


def load_policy(
    path: str,
    *,
    lora_rank: int = 0,
    lora_alpha: int | None = None,
    lora_targets: str = "all-linear",
    gradient_checkpointing: bool = False,
) -> nn.Module:
    """Load a causal LM in fp32 (master weights) on CPU; wrap with LoRA if rank > 0."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    model.config.use_cache = False
    if gradient_checkpointing:
        model.gradient_checkpointing_enable()
    if lora_rank > 0:
        from peft import LoraConfig, get_peft_model

        targets: str | list[str] = (
            lora_targets if lora_targets == "all-linear" else lora_targets.split(",")
        )
        config = LoraConfig(
            r=lora_rank,
            lora_alpha=lora_alpha or 2 * lora_rank,
            target_modules=targets,
            lora_dropout=0.0,
            bias="none",
        )
        model = get_peft_model(model, config)
    return model


def token_logprobs(
    model: nn.Module,
    batch: MicroBatch,
    temperature: float = 1.0,
    entropy: bool = False,
    entropy_grad: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Log pi(token_{j+1} | tokens_{<=j}) for every target position [B, L-1] (fp32), with
    logits divided by the sampling temperature exactly as the engine sampled; optionally
    the per-position entropy (with gradient only when `entropy_grad`)."""
    out = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, use_cache=False)
    logits = out.logits[:, :-1].float()
    if temperature > 0 and temperature != 1.0:
        logits = logits / temperature
    targets = batch.input_ids[:, 1:].unsqueeze(-1)
    logp = logits.gather(-1, targets).squeeze(-1) - torch.logsumexp(logits, dim=-1)
    ent = None
    if entropy:
        if entropy_grad:
            ent = entropy_from_logits(logits)
        else:
            with torch.no_grad():
                ent = entropy_from_logits(logits.detach())
    return logp, ent


def merge_lora(state: dict[str, Tensor], scaling: float) -> dict[str, Tensor]:
    """peft state -> plain HF names, W = W_base + scaling * B @ A for every LoRA layer."""
    out: dict[str, Tensor] = {}
    for key, value in state.items():
        if ".lora_A." in key or ".lora_B." in key:
            continue
        name = key.removeprefix(_PEFT_PREFIX)
        if ".base_layer." in name:
            stem = key.rsplit(".base_layer.", 1)[0]
            name = name.replace(".base_layer.", ".")
            a = state.get(f"{stem}.lora_A.default.weight")
            b = state.get(f"{stem}.lora_B.default.weight")
            if a is not None and b is not None and key.endswith("weight"):
                value = value + scaling * (b.float() @ a.float()).to(value.dtype)
        out[name] = value
    return out


def hf_state_dict(
    state: dict[str, Tensor],
    *,
    tied_embeddings: bool,
    lora_scaling: float | None,
    dtype: torch.dtype,
) -> dict[str, Tensor]:
    """Plain HF parameter names, LoRA merged, tied lm_head dropped, cast, contiguous."""
    if lora_scaling is not None:
        state = merge_lora(state, lora_scaling)
    if tied_embeddings:
        state = {k: v for k, v in state.items() if k != "lm_head.weight"}
    return {k: v.detach().to("cpu", dtype).contiguous() for k, v in state.items()}


def lora_scaling(model: nn.Module) -> float | None:
    config = getattr(model, "peft_config", None)
    if not config:
        return None
    cfg = config["default"]
    return float(cfg.lora_alpha) / float(cfg.r)


def base_config(model: nn.Module):  # type: ignore[no-untyped-def]
    """The transformers config, through a peft wrapper if there is one."""
    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    return inner.config


def model_source_dir(path: str) -> Path | None:
    p = Path(path)
    return p if p.is_dir() else None
