"""Optional GPU weight publication by NCCL broadcast (settings.nccl_publish).

Protocol: the learner is rank 0 of a dedicated weight group (a TCPStore at
settings.nccl_address, world size settings.nccl_world_size); inference workers join it as
ranks 1..N once. Per version, the learner POSTs a WeightUpdate whose `path` is
`nccl://host:port` (so replicas enter their receive loop), then broadcasts every tensor of
the HF state dict in sorted-name order. Every collective waits at most nccl_timeout_s; on
timeout the broadcaster marks itself broken and the learner falls back to safetensors
publication only. This path needs CUDA and cannot run on CPU-only machines.
"""

from __future__ import annotations

import logging
from datetime import timedelta

import torch
import torch.distributed as dist

log = logging.getLogger(__name__)


class NcclWeightBroadcaster:
    def __init__(self, address: str, world_size: int, timeout_s: float) -> None:
        if not torch.cuda.is_available():
            raise RuntimeError("NCCL weight broadcast needs CUDA")
        host, port = address.rsplit(":", 1)
        self.url = f"nccl://{address}"
        self.timeout = timedelta(seconds=timeout_s)
        self.broken = False
        store = dist.TCPStore(host, int(port), world_size, is_master=True, timeout=self.timeout)
        options = dist.ProcessGroupNCCL.Options()
        options._timeout = self.timeout
        self.group = dist.ProcessGroupNCCL(store, 0, world_size, options)

    def broadcast(self, state: dict[str, torch.Tensor]) -> bool:
        """Send every tensor (sorted by name) from rank 0; False (and broken) on timeout."""
        if self.broken:
            return False
        try:
            for name in sorted(state):
                tensor = state[name].to("cuda", non_blocking=True).contiguous()
                work = self.group.broadcast([tensor], dist.BroadcastOptions())
                if not work.wait(self.timeout):
                    raise TimeoutError(f"broadcast of {name} timed out")
            torch.cuda.synchronize()
            return True
        except (RuntimeError, TimeoutError) as exc:
            log.error("NCCL weight broadcast failed (%s); falling back to safetensors", exc)
            self.broken = True
            return False
