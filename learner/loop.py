"""The learner loop: take -> train -> publish v+1 -> ack -> metrics -> checkpoint."""

from __future__ import annotations

import copy
import logging
import random
import threading
import time
from pathlib import Path
from typing import Any

import torch

from learner import checkpoint as ckpt
from learner.algorithms import check_algorithm
from learner.distributed import (
    DistContext,
    barrier,
    broadcast_object,
    full_model_state,
    full_optimizer_state,
    load_full_state,
    load_hf_weights,
    shard_model,
)
from learner.evaluation import Evaluator
from learner.metrics import MetricsSink
from learner.model import (
    base_config,
    hf_state_dict,
    load_policy,
    lora_scaling,
    model_source_dir,
    resolve_model_path,
)
from learner.optim import build_optimizer, build_scheduler
from learner.publish import inference_targets, notify_inference
from learner.replay import ReplayAdapter
from learner.settings import LearnerSettings
from learner.trainer import Trainer, TrainerConfig
from services.common.jobspec import JobRuntime
from services.common.wire import PolicyPublication, WeightUpdate
from services.replay.schemas import Batch

log = logging.getLogger(__name__)

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _export_dtype(setting: str, config: Any) -> torch.dtype:
    if setting != "auto":
        return _DTYPES[setting]
    found = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    if isinstance(found, torch.dtype):
        return found
    return _DTYPES.get(str(found), torch.float32)


def _use_bf16(settings: LearnerSettings, ctx: DistContext) -> bool:
    if settings.precision == "bf16":
        return True
    if settings.precision == "fp32":
        return False
    return ctx.device.type == "cuda" and torch.cuda.is_bf16_supported()


class Learner:
    """One learner process (one rank). Only rank 0 talks to replay, inference and the API."""

    def __init__(
        self,
        runtime: JobRuntime,
        settings: LearnerSettings,
        ctx: DistContext,
        replay: ReplayAdapter | None,
    ) -> None:
        self.rt = runtime
        self.spec = runtime.spec
        self.settings = settings
        self.ctx = ctx
        self.replay = replay
        self.run_dir = Path(runtime.run_dir)
        self.state = ckpt.LearnerState()
        self.stop_requested = threading.Event()
        self.metrics = (
            MetricsSink(
                self.run_dir, runtime.job_id, runtime.endpoints.api, settings.metrics_timeout_s
            )
            if ctx.is_main
            else None
        )
        self._broadcaster: Any = None
        self._session_start = time.monotonic()
        self._elapsed_before = 0.0
        self._last_saved_version = -1
        self._failed_replicas = 0
        self.evaluator: Evaluator | None = None

    # ------------------------------------------------------------------- setup

    def setup(self, resume: bool = False) -> None:
        algo = self.spec.algorithm
        check_algorithm(algo)
        random.seed(self.spec.seed + self.ctx.rank)
        torch.manual_seed(self.spec.seed + self.ctx.rank)
        self.model_path = resolve_model_path(self.spec.model.name)
        model = load_policy(
            self.model_path,
            lora_rank=algo.lora_rank,
            lora_alpha=self.settings.lora_alpha,
            lora_targets=self.settings.lora_target_modules,
            gradient_checkpointing=self.settings.gradient_checkpointing,
        )
        ref = None
        if algo.kl_coef > 0 and algo.lora_rank == 0:
            ref = copy.deepcopy(model).requires_grad_(False).eval()
            ref = shard_model(ref.to(self.ctx.device), self.ctx)
        self.model = shard_model(model.to(self.ctx.device), self.ctx)
        self.config = base_config(self.model)
        self.optimizer = build_optimizer(self.model, algo)
        total = self.spec.budget.max_steps * self.settings.updates_per_batch
        self.scheduler = build_scheduler(self.optimizer, algo, total)
        pad = self.config.pad_token_id
        pad = pad if pad is not None else (self.config.eos_token_id or 0)
        if isinstance(pad, list):
            pad = pad[0]
        temperature = self.spec.sampling.temperature or 1.0
        tcfg = TrainerConfig(
            algo, self.settings, temperature, self.spec.sampling.max_episode_tokens,
            int(pad), _use_bf16(self.settings, self.ctx),
        )  # fmt: skip
        self.trainer = Trainer(self.model, self.optimizer, self.scheduler, tcfg, self.ctx, ref)
        found = ckpt.latest_checkpoint(self.run_dir) if resume else None
        if found is not None:
            self._restore(found)
        if self.settings.nccl_publish and self.ctx.is_main:
            from learner.nccl_broadcast import NcclWeightBroadcaster

            s = self.settings
            self._broadcaster = NcclWeightBroadcaster(
                s.nccl_address, s.nccl_world_size, s.nccl_timeout_s
            )
        if self.replay is not None:
            try:
                self.replay.recover(self.rt.job_id)  # unacked batches come back
            except Exception as exc:  # a replay without pending state is not fatal
                log.warning("replay.recover failed: %s", exc)
        if found is not None:
            self._catch_up_with_publication()
        self._publish(self.state.version, notify=found is not None)
        if self.metrics is not None and self.settings.evaluate and self.spec.eval.every_n_steps:
            self.evaluator = Evaluator(self.rt, self.metrics.record)
            self.evaluator.maybe_request(self.state.version)

    def _catch_up_with_publication(self) -> None:
        """Versions only go up (replay refuses an older publication). When the learner died
        after publishing versions newer than its last resumable checkpoint, continue from
        the newest published weights with the checkpoint's optimizer state."""
        pub = self.replay.latest_publication(self.rt.job_id) if self.replay else None
        newer = broadcast_object(pub.version if pub else None, self.ctx)
        if newer is None or newer <= self.state.version:
            return
        folder = ckpt.policy_dir(self.run_dir, newer)
        weights = folder / "model.safetensors"
        if lora_scaling(self.model) is None and weights.is_file():
            load_hf_weights(self.model, weights, self.ctx)
            log.warning(
                "checkpoint v%d is older than published v%d: loaded weights of %s "
                "(optimizer state from v%d)", self.state.version, newer, folder, self.state.version,
            )  # fmt: skip
        else:
            log.warning(
                "published v%d newer than checkpoint v%d: continuing numbering",
                newer,
                self.state.version,
            )
        self.state.version = newer

    def _restore(self, path: Path) -> None:
        model_state, optim, sched, rng, state = ckpt.load_resumable(path)
        load_full_state(self.model, self.optimizer, model_state, optim, self.ctx)
        self.scheduler.load_state_dict(sched)
        ckpt.restore_rng(rng)
        self.state = state
        self._elapsed_before = state.elapsed_s
        self._last_saved_version = state.version
        log.info("resumed from %s at policy version %d", path, state.version)

    # -------------------------------------------------------------- publication

    def _publish(self, version: int, notify: bool = True) -> float:
        """Export v{version}, tell inference, announce it on replay. Returns seconds."""
        start = time.perf_counter()
        full = full_model_state(self.model, self.ctx)
        if self.ctx.is_main:
            tied = bool(getattr(self.config, "tie_word_embeddings", False))
            dtype = _export_dtype(self.settings.export_dtype, self.config)
            weights = hf_state_dict(
                full, tied_embeddings=tied, lora_scaling=lora_scaling(self.model), dtype=dtype
            )
            path = ckpt.write_policy(
                weights, ckpt.policy_dir(self.run_dir, version),
                model_source_dir(self.model_path), self.config,
            )  # fmt: skip
            if notify:
                self._notify(version, str(path), weights)
            if self.replay is not None:
                self.replay.publish(
                    PolicyPublication(
                        job_id=self.rt.job_id, version=version, checkpoint_path=str(path)
                    )
                )
            protect = {self._last_saved_version, version}
            ckpt.prune_policies(self.run_dir, self.settings.keep_policy_versions, protect)
        barrier(self.ctx)
        return time.perf_counter() - start

    def _notify(self, version: int, path: str, weights: dict[str, torch.Tensor]) -> None:
        targets = inference_targets(self.rt.endpoints)
        timeout = self.settings.publish_timeout_s
        if self._broadcaster is not None and not self._broadcaster.broken:
            update = WeightUpdate(version=version, path=self._broadcaster.url, timeout_s=timeout)
            thread = threading.Thread(target=notify_inference, args=(targets, update, timeout))
            thread.start()
            sent = self._broadcaster.broadcast(weights)
            thread.join(timeout)
            if sent:
                return
        update = WeightUpdate(version=version, path=path, timeout_s=timeout)
        results = notify_inference(targets, update, timeout)
        self._failed_replicas = sum(1 for ok in results.values() if not ok)

    # ----------------------------------------------------------------- the loop

    def elapsed(self) -> float:
        return self._elapsed_before + time.monotonic() - self._session_start

    def budget_reason(self) -> str | None:
        budget = self.spec.budget
        if self.state.version >= budget.max_steps:
            return "max_steps"
        if budget.max_tokens is not None and self.state.trained_tokens >= budget.max_tokens:
            return "max_tokens"
        if budget.max_wall_time_s is not None and self.elapsed() >= budget.max_wall_time_s:
            return "max_wall_time"
        return None

    def _take(self) -> tuple[Batch | None, bool]:
        """(batch or None, stop) decided on rank 0 and shared with every rank."""
        batch: Batch | None = None
        stop = self.stop_requested.is_set() or self.budget_reason() is not None
        if self.ctx.is_main and not stop and self.replay is not None:
            batch = self.replay.take_batch(
                self.rt.job_id, self.state.version, self.spec.max_staleness,
                self.spec.groups_per_batch, self.settings.take_wait_s,
            )  # fmt: skip
        return broadcast_object((batch, stop), self.ctx)

    def step_once(self) -> bool:
        """Run at most one step; False when the loop should end."""
        waited = time.perf_counter()
        batch, stop = self._take()
        if stop:
            return False
        if batch is None:
            return True
        waited = time.perf_counter() - waited
        if batch.batch_id == self.state.last_batch_id:  # trained, then died before the ack
            self._ack(batch.batch_id)
            return True
        values = self.trainer.step(batch.trajectories, self.state.version)
        self.state.version += 1
        self.state.optimizer_steps += self.settings.updates_per_batch
        self.state.last_batch_id = batch.batch_id
        self.state.batches_acked += 1
        self.state.trained_tokens += int(values["num_loss_tokens"])
        self.state.trained_samples += len(batch.trajectories)
        self.state.dropped_stale += batch.dropped_stale
        if self.state.version % self.spec.checkpoint.every_n_steps == 0:
            self.save_checkpoint()  # before publishing: a published version is resumable
        self._failed_replicas = 0
        publish_s = self._publish(self.state.version)
        self._ack(batch.batch_id)
        if self.evaluator is not None:
            self.evaluator.maybe_request(self.state.version)
        self.state.elapsed_s = self.elapsed()
        values |= {
            "version": float(self.state.version),
            "dropped_stale": float(batch.dropped_stale),
            "redelivered": float(batch.redelivered),
            "wait_s": waited,
            "publish_s": publish_s,
            "replicas_failed": float(self._failed_replicas),
            "trained_tokens_total": float(self.state.trained_tokens),
        }
        if self.metrics is not None:
            self.metrics.record(self.state.version, values)
        log.info(
            "v%d reward=%.3f loss=%.4f kl=%.4f %.0f tok/s step %.1fs",
            self.state.version, values["reward/mean"], values["loss/total"], values["kl"],
            values["tokens_per_s"], values["step_time_s"],
        )  # fmt: skip
        return True

    def _ack(self, batch_id: str) -> None:
        if self.ctx.is_main and self.replay is not None:
            self.replay.ack(self.rt.job_id, batch_id)

    def save_checkpoint(self) -> None:
        if self.state.version == self._last_saved_version:
            return
        self.state.elapsed_s = self.elapsed()
        model_state = full_model_state(self.model, self.ctx)
        optim_state = full_optimizer_state(self.model, self.optimizer, self.ctx)
        if self.ctx.is_main:
            path = ckpt.save_resumable(
                self.run_dir, model_state, optim_state, self.scheduler.state_dict(), self.state
            )
            ckpt.prune_checkpoints(self.run_dir, self.spec.checkpoint.keep_last)
            log.info("checkpoint %s", path)
        self._last_saved_version = self.state.version
        barrier(self.ctx)

    def run(self) -> str:
        """Train until a budget is reached or a stop is requested; returns the reason."""
        while self.step_once():
            pass
        reason = self.budget_reason() or "stopped"
        self.save_checkpoint()
        if reason != "stopped":
            self.export_final()
            if self.evaluator is not None:  # the final evaluation belongs to the run
                self.evaluator.close()
        log.info("learner done at v%d (%s)", self.state.version, reason)
        return reason

    def export_final(self) -> Path:
        full = full_model_state(self.model, self.ctx)
        dest = self.run_dir / "final"
        if self.ctx.is_main:
            tied = bool(getattr(self.config, "tie_word_embeddings", False))
            dtype = _export_dtype(self.settings.export_dtype, self.config)
            weights = hf_state_dict(
                full, tied_embeddings=tied, lora_scaling=lora_scaling(self.model), dtype=dtype
            )
            ckpt.write_policy(weights, dest, model_source_dir(self.model_path), self.config)
        barrier(self.ctx)
        return dest

    def close(self) -> None:
        if self.evaluator is not None:
            self.evaluator.close(timeout_s=5.0)
        if self.metrics is not None:
            self.metrics.close()
        if self.replay is not None:
            self.replay.close()
