"""One code path for 1..N ranks: torchrun env vars select torch.distributed (NCCL on GPU,
gloo on CPU) and FSDP2 sharding; without them everything runs in-process, world size 1."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

log = logging.getLogger(__name__)


@dataclass
class DistContext:
    rank: int
    world_size: int
    local_rank: int
    device: torch.device

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def pick_device(preference: str) -> torch.device:
    if preference == "cuda" or (preference == "auto" and torch.cuda.is_available()):
        return torch.device("cuda")
    return torch.device("cpu")


def init_distributed(device_preference: str, timeout_s: float) -> DistContext:
    """Join the torchrun process group when launched by torchrun; else world size 1."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = pick_device(device_preference)
    if device.type == "cuda":
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    if world > 1 and not dist.is_initialized():
        backend = "nccl" if device.type == "cuda" else "gloo"
        dist.init_process_group(backend, timeout=timedelta(seconds=timeout_s))
        log.info("rank %d/%d joined (%s)", rank, world, backend)
    return DistContext(rank, world, local_rank, device)


def shard_model(model: nn.Module, ctx: DistContext) -> nn.Module:
    """FSDP2: shard every decoder layer, then the root. No-op at world size 1."""
    if not ctx.distributed:
        return model
    from torch.distributed.fsdp import fully_shard

    for module in model.modules():
        if type(module).__name__.endswith("DecoderLayer"):
            fully_shard(module)
    fully_shard(model)
    return model


def broadcast_object(obj: Any, ctx: DistContext) -> Any:
    """Rank 0's object on every rank."""
    if not ctx.distributed:
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def all_reduce_sum(values: list[float], ctx: DistContext) -> list[float]:
    if not ctx.distributed:
        return values
    t = torch.tensor(values, dtype=torch.float64, device=_comm_device(ctx))
    dist.all_reduce(t)
    return t.tolist()


def all_reduce_max(value: int, ctx: DistContext) -> int:
    if not ctx.distributed:
        return value
    t = torch.tensor([value], dtype=torch.long, device=_comm_device(ctx))
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return int(t.item())


def all_reduce_max_floats(values: list[float], ctx: DistContext) -> list[float]:
    if not ctx.distributed:
        return values
    t = torch.tensor(values, dtype=torch.float64, device=_comm_device(ctx))
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.tolist()


def _comm_device(ctx: DistContext) -> torch.device:
    return ctx.device if ctx.device.type == "cuda" else torch.device("cpu")


def full_model_state(model: nn.Module, ctx: DistContext) -> dict[str, torch.Tensor]:
    """Unsharded model state on CPU (on rank 0; other ranks get {} when distributed)."""
    if not ctx.distributed:
        return {k: v.detach().to("cpu") for k, v in model.state_dict().items()}
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    opts = StateDictOptions(full_state_dict=True, cpu_offload=True)
    return get_model_state_dict(model, options=opts)


def full_optimizer_state(
    model: nn.Module, optimizer: torch.optim.Optimizer, ctx: DistContext
) -> dict[str, Any]:
    if not ctx.distributed:
        return optimizer.state_dict()
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        get_optimizer_state_dict,
    )

    opts = StateDictOptions(full_state_dict=True, cpu_offload=True)
    return get_optimizer_state_dict(model, optimizer, options=opts)


def load_full_state(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    model_state: dict[str, torch.Tensor],
    optim_state: dict[str, Any],
    ctx: DistContext,
) -> None:
    """Load unsharded states (read by every rank) into a possibly sharded model."""
    if not ctx.distributed:
        model.load_state_dict(model_state)
        optimizer.load_state_dict(optim_state)
        return
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        set_model_state_dict,
        set_optimizer_state_dict,
    )

    opts = StateDictOptions(full_state_dict=True)
    set_model_state_dict(model, model_state, options=opts)
    set_optimizer_state_dict(model, optimizer, optim_state, options=opts)


def load_hf_weights(model: nn.Module, path: Path, ctx: DistContext) -> None:
    """Load a published safetensors file (plain HF names) into the training model."""
    from safetensors.torch import load_file

    state = {k: v.float() for k, v in load_file(str(path)).items()}
    if not ctx.distributed:
        model.load_state_dict(state, strict=False)
        return
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

    set_model_state_dict(model, state, options=StateDictOptions(full_state_dict=True, strict=False))


def barrier(ctx: DistContext) -> None:
    if ctx.distributed:
        dist.barrier()


def shutdown(ctx: DistContext) -> None:
    if ctx.distributed and dist.is_initialized():
        dist.destroy_process_group()
