"""Checkpoint helper shared by the inference integration tests (no tests here)."""

from __future__ import annotations

from pathlib import Path


def perturbed_checkpoint(model: Path, out: Path, seed: int = 0, scale: float = 0.1) -> Path:
    """What the learner publishes: a folder with only `model.safetensors`."""
    import torch
    from safetensors.torch import load_file, save_file

    gen = torch.Generator().manual_seed(seed)
    state = load_file(str(model / "model.safetensors"))
    out.mkdir(parents=True, exist_ok=True)
    noisy = {k: v + scale * torch.randn(v.shape, generator=gen).to(v.dtype)
             for k, v in state.items()}
    save_file(noisy, str(out / "model.safetensors"))
    return out
