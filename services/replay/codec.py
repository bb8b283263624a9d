"""Compact binary encoding of a Trajectory for the Redis backend.

Layout: magic `SLT1`, a little-endian u32 header length, the JSON header (every field but
the four per-token arrays, plus the token count), then the arrays as raw little-endian
numpy buffers: token_ids int32, loss_mask uint8, behavior_logprobs float32,
policy_versions int32. About 13 bytes per token instead of ~30 in JSON.

Behaviour logprobs are stored as float32, the precision the engine computes them in.
"""

from __future__ import annotations

import json
import struct

import numpy as np

from services.common.wire import Trajectory

MAGIC = b"SLT1"
_ARRAYS: tuple[tuple[str, str], ...] = (
    ("token_ids", "<i4"),
    ("loss_mask", "<u1"),
    ("behavior_logprobs", "<f4"),
    ("policy_versions", "<i4"),
)
_EXCLUDE = {name for name, _ in _ARRAYS}


class CodecError(ValueError):
    """The bytes are not an encoded trajectory (wrong magic or truncated)."""


def encode(traj: Trajectory) -> bytes:
    header = traj.model_dump(mode="json", exclude=_EXCLUDE)
    header["_n"] = len(traj.token_ids)
    head = json.dumps(header, separators=(",", ":")).encode()
    parts = [MAGIC, struct.pack("<I", len(head)), head]
    for name, dtype in _ARRAYS:
        parts.append(np.asarray(getattr(traj, name), dtype=dtype).tobytes())
    return b"".join(parts)


def decode(blob: bytes) -> Trajectory:
    if blob[:4] != MAGIC:
        raise CodecError("not an encoded trajectory (bad magic)")
    (head_len,) = struct.unpack_from("<I", blob, 4)
    offset = 8 + head_len
    header = json.loads(blob[8:offset])
    n = header.pop("_n")
    for name, dtype in _ARRAYS:
        size = np.dtype(dtype).itemsize * n
        if offset + size > len(blob):
            raise CodecError(f"truncated trajectory blob while reading {name}")
        header[name] = np.frombuffer(blob, dtype=dtype, count=n, offset=offset).tolist()
        offset += size
    return Trajectory.model_validate(header)
