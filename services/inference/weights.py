"""Checkpoint checks before a weight load: find the safetensors files the learner published
and compare their tensor names and shapes with the serving model's, reading only the
safetensors headers (no torch). A mismatch is refused up front, so the old weights keep
serving and the caller learns exactly which tensor is wrong.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from urllib.parse import urlparse

TensorShapes = dict[str, tuple[int, ...]]
# Tied to the input embeddings in models like SmolLM2: a checkpoint may carry it or not.
OPTIONAL_TENSORS = ("lm_head.weight",)


class CheckpointError(ValueError):
    """The checkpoint cannot be loaded into this model (says why)."""


def local_path(path_or_uri: str) -> Path:
    """A local path from a path or a `file://` URI (other schemes are refused)."""
    parsed = urlparse(path_or_uri)
    if parsed.scheme in ("", "file"):
        return Path(parsed.path if parsed.scheme else path_or_uri).expanduser()
    raise CheckpointError(f"unsupported checkpoint URI scheme '{parsed.scheme}' (use a path)")


def safetensors_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise CheckpointError(f"checkpoint {path} does not exist")
    files = sorted(path.glob("*.safetensors"))
    if not files:
        raise CheckpointError(f"no *.safetensors file in {path}")
    return files


def read_header(file: Path) -> TensorShapes:
    """Tensor name -> shape, from the safetensors header only."""
    try:
        with file.open("rb") as fh:
            (length,) = struct.unpack("<Q", fh.read(8))
            if length > 100_000_000:
                raise CheckpointError(
                    f"{file}: not a readable safetensors file (header length {length})"
                )
            header = json.loads(fh.read(length))
    except (OSError, struct.error, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{file}: not a readable safetensors file ({exc})") from exc
    return {
        name: tuple(meta["shape"]) for name, meta in header.items() if name != "__metadata__"
    }


def checkpoint_shapes(path: Path) -> TensorShapes:
    shapes: TensorShapes = {}
    for file in safetensors_files(path):
        shapes.update(read_header(file))
    return shapes


def check_compatible(new: TensorShapes, reference: TensorShapes) -> None:
    """Raise CheckpointError unless `new` has exactly the reference's tensors and shapes
    (tied output embeddings may be present or absent on either side)."""
    unexpected = sorted(set(new) - set(reference) - set(OPTIONAL_TENSORS))
    missing = sorted(set(reference) - set(new) - set(OPTIONAL_TENSORS))
    if unexpected or missing:
        raise CheckpointError(
            f"checkpoint does not match the serving model: missing {missing[:5]}"
            f"{'...' if len(missing) > 5 else ''}, unexpected {unexpected[:5]}"
            f"{'...' if len(unexpected) > 5 else ''}"
        )
    for name, shape in new.items():
        if name in reference and reference[name] != shape:
            raise CheckpointError(
                f"tensor {name} has shape {list(shape)}, the serving model {list(reference[name])}"
            )
