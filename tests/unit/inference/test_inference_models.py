"""Model preparation: names, pass-through, the tiny model's shape, idempotence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.inference import models
from services.inference.weights import CheckpointError, check_compatible, checkpoint_shapes


def test_unknown_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="tiny-random"):
        models.prepare_model("no-such-model", cache_dir=tmp_path)


def test_resolve_passes_paths_and_hub_names_through(tmp_path: Path) -> None:
    assert models.resolve_model(str(tmp_path)) == str(tmp_path)
    assert models.resolve_model("HuggingFaceTB/SmolLM2-135M") == "HuggingFaceTB/SmolLM2-135M"


def test_cache_dir_follows_slipstream_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SLIPSTREAM_HOME", str(tmp_path))
    assert models.default_cache_dir() == tmp_path / "models"


def test_tiny_model_is_small_with_head_dim_64(tiny_model_path: Path) -> None:
    config = json.loads((tiny_model_path / "config.json").read_text())
    assert config["hidden_size"] // config["num_attention_heads"] == 64
    assert config["num_hidden_layers"] == 2 and config["vocab_size"] == 49152
    assert (tiny_model_path / "model.safetensors").is_file()
    assert "tool_call" in (tiny_model_path / "chat_template.jinja").read_text()
    assert models.is_prepared(tiny_model_path)


def test_prepare_is_idempotent(tiny_model_path: Path) -> None:
    stamp = (tiny_model_path / "model.safetensors").stat().st_mtime_ns
    again = models.prepare_model(models.TINY_RANDOM, cache_dir=tiny_model_path.parent)
    assert again == tiny_model_path
    assert (again / "model.safetensors").stat().st_mtime_ns == stamp


def test_checkpoint_checks_read_headers(tiny_model_path: Path) -> None:
    shapes = checkpoint_shapes(tiny_model_path)
    check_compatible(shapes, shapes)
    check_compatible({k: v for k, v in shapes.items() if k != "lm_head.weight"}, shapes)
    wrong = dict(shapes)
    name = next(k for k in shapes if k.endswith("q_proj.weight"))
    wrong[name] = (1, 1)
    with pytest.raises(CheckpointError, match=name):
        check_compatible(wrong, shapes)
    with pytest.raises(CheckpointError, match="missing"):
        check_compatible({name: shapes[name]}, shapes)
    with pytest.raises(CheckpointError, match="does not exist"):
        checkpoint_shapes(tiny_model_path / "nope")
