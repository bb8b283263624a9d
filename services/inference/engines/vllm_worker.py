"""A vLLM worker extension (mixed into every vLLM worker via `worker_extension_cls`):
in-place weight reload that also refreshes derived state vLLM's own reload leaves stale.

vLLM's layerwise `reload_weights` re-runs weight post-processing only for layers it
loaded. A tied output head (`lm_head` sharing the input embeddings, as in SmolLM2) loads
nothing itself, so on CPU its prepacked GEMM copy would keep the old weights; we re-run
the post-processing of every vocabulary layer after the reload.

Runs inside vLLM's worker process: imports vllm freely, is never imported by the service.
"""

from __future__ import annotations

from typing import Any


class SlipstreamWorkerExtension:
    """Methods callable by name through `AsyncLLM.collective_rpc`."""

    def slipstream_reload_weights(self, weights_path: str) -> int:
        """Reload all weights from the safetensors in `weights_path`; returns how many
        vocabulary layers were re-processed."""
        worker: Any = self
        worker.reload_weights(weights_path=weights_path, is_checkpoint_format=True)
        return _refresh_vocab_layers(worker.model_runner.get_model())


def _refresh_vocab_layers(model: Any) -> int:
    from vllm.model_executor.layers.vocab_parallel_embedding import VocabParallelEmbedding

    refreshed = 0
    for module in model.modules():
        method = getattr(module, "quant_method", None)
        if isinstance(module, VocabParallelEmbedding) and method is not None:
            method.process_weights_after_loading(module)
            refreshed += 1
    return refreshed
