"""Checkpoints.

- Published policies: run_dir/policy/v{N}/model.safetensors (plain HF names, LoRA merged)
  plus the model folder's config and tokenizer files, so inference and `from_pretrained`
  load it. Also run_dir/final/ at the end of a job.
- Resumable checkpoints: run_dir/checkpoints/v{N:08d}/ with model.safetensors (fp32,
  training names), optimizer.pt, scheduler.pt, rng.pt and state.json (version, counters,
  replay cursor). state.json is written last and the folder is renamed into place, so a
  folder with state.json is complete.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
from pathlib import Path
from typing import Any

import torch
from pydantic import BaseModel, Field
from safetensors.torch import load_file, save_file

log = logging.getLogger(__name__)

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".gguf")
WEIGHT_INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
STATE_FILE = "state.json"


class LearnerState(BaseModel):
    """Counters and the replay cursor saved with every resumable checkpoint."""

    version: int = Field(0, description="Policy version of the saved weights.")
    optimizer_steps: int = Field(0, description="Optimizer steps taken.")
    trained_tokens: int = Field(0, description="Loss tokens trained on (budget.max_tokens).")
    trained_samples: int = Field(0, description="Trajectories trained on.")
    elapsed_s: float = Field(0.0, description="Training wall time so far (all runs).")
    last_batch_id: str | None = Field(None, description="Last batch acknowledged to replay.")
    batches_acked: int = Field(0, description="Batches acknowledged to replay.")
    dropped_stale: int = Field(0, description="Samples replay dropped as too stale.")


# ---------------------------------------------------------------------------- policies


def copy_model_files(source: Path | None, dest: Path) -> None:
    """Config, generation config, tokenizer and chat template: every non-weight file."""
    if source is None:
        return
    for item in source.iterdir():
        if (
            item.is_file()
            and not item.name.endswith(WEIGHT_SUFFIXES)
            and item.name not in WEIGHT_INDEXES
        ):
            shutil.copy2(item, dest / item.name)


def write_policy(
    state: dict[str, torch.Tensor], dest: Path, source: Path | None, config: Any = None
) -> Path:
    """Atomically write an HF folder (model.safetensors + config/tokenizer) at `dest`."""
    tmp = dest.with_name(f".{dest.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    copy_model_files(source, tmp)
    if config is not None and not (tmp / "config.json").exists():
        config.save_pretrained(str(tmp))
    save_file(state, str(tmp / "model.safetensors"), metadata={"format": "pt"})
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)
    return dest


def policy_dir(run_dir: Path, version: int) -> Path:
    return Path(run_dir) / "policy" / f"v{version}"


def prune_policies(run_dir: Path, keep: int, protect: set[int]) -> None:
    root = Path(run_dir) / "policy"
    if not root.is_dir():
        return
    versions = sorted(int(p.name[1:]) for p in root.iterdir() if p.name[1:].isdigit())
    for v in versions[:-keep]:
        if v not in protect:
            shutil.rmtree(root / f"v{v}", ignore_errors=True)


# -------------------------------------------------------------------------- resumable


def checkpoint_root(run_dir: Path) -> Path:
    return Path(run_dir) / "checkpoints"


def list_checkpoints(run_dir: Path) -> list[Path]:
    root = checkpoint_root(run_dir)
    if not root.is_dir():
        return []
    done = [p for p in root.iterdir() if p.is_dir() and (p / STATE_FILE).is_file()]
    return sorted(done, key=lambda p: p.name)


def latest_checkpoint(run_dir: Path) -> Path | None:
    found = list_checkpoints(run_dir)
    return found[-1] if found else None


def rng_state() -> dict[str, Any]:
    state: dict[str, Any] = {"python": random.getstate(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_resumable(
    run_dir: Path,
    model_state: dict[str, torch.Tensor],
    optimizer_state: dict[str, Any],
    scheduler_state: dict[str, Any],
    state: LearnerState,
) -> Path:
    dest = checkpoint_root(run_dir) / f"v{state.version:08d}"
    tmp = dest.with_name(f".{dest.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    tensors = {k: v.detach().to("cpu").contiguous() for k, v in model_state.items()}
    save_file(_untie(tensors), str(tmp / "model.safetensors"))
    torch.save(optimizer_state, tmp / "optimizer.pt")
    torch.save(scheduler_state, tmp / "scheduler.pt")
    torch.save(rng_state(), tmp / "rng.pt")
    (tmp / STATE_FILE).write_text(json.dumps(state.model_dump(), indent=2))
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)
    return dest


def _untie(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """safetensors refuses shared storage (tied embeddings): give each name its own copy."""
    seen: set[int] = set()
    out = {}
    for k, v in tensors.items():
        ptr = v.untyped_storage().data_ptr()
        out[k] = v.clone() if ptr in seen else v
        seen.add(ptr)
    return out


def load_resumable(path: Path) -> tuple[dict[str, torch.Tensor], Any, Any, Any, LearnerState]:
    """(model state, optimizer state, scheduler state, rng state, learner state)."""
    state = LearnerState.model_validate_json((path / STATE_FILE).read_text())
    model_state = load_file(str(path / "model.safetensors"))
    optim = torch.load(path / "optimizer.pt", weights_only=False)
    sched = torch.load(path / "scheduler.pt", weights_only=False)
    rng = torch.load(path / "rng.pt", weights_only=False)
    return model_state, optim, sched, rng, state


def prune_checkpoints(run_dir: Path, keep_last: int) -> None:
    for old in list_checkpoints(run_dir)[:-keep_last]:
        shutil.rmtree(old, ignore_errors=True)
