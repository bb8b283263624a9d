"""The `slipstream` command: instant help, spec validation at the edge, --set parsing."""

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from services.cli.commands import settings_env
from services.cli.main import app

runner = CliRunner()
REPO = Path(__file__).resolve().parents[3]


def test_help_lists_the_command_tree() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("up", "down", "status", "submit", "jobs", "logs", "run", "models"):
        assert command in result.output


def test_help_does_not_import_heavy_modules() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from services.cli.main import app\n"
        "CliRunner().invoke(app, ['--help'])\n"
        "heavy = [m for m in ('torch', 'vllm', 'transformers', 'fastapi') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_validate_names_the_typo_key(tmp_path: Path) -> None:
    spec = tmp_path / "typo.yaml"
    spec.write_text("environments:\n  - name: arithmetic\nalgorithm:\n  learnig_rate: 0.1\n")
    result = runner.invoke(app, ["validate", str(spec)])
    assert result.exit_code == 2
    assert "algorithm.learnig_rate: unknown key 'learnig_rate'" in result.output


def test_validate_accepts_the_quickstart() -> None:
    result = runner.invoke(app, ["validate", str(REPO / "examples" / "quickstart.yaml")])
    assert result.exit_code == 0, result.output
    assert "valid job spec 'quickstart-arithmetic'" in result.output


def test_missing_spec_file_is_a_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["submit", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 1
    assert "no such job spec" in result.output


def test_settings_env_mapping() -> None:
    assert settings_env(["inference.engine__type=hf", "replay.port=9"]) == {
        "SLIPSTREAM_INFERENCE_ENGINE__TYPE": "hf",
        "SLIPSTREAM_REPLAY_PORT": "9",
    }


def test_settings_env_rejects_malformed() -> None:
    import typer

    with pytest.raises(typer.Exit):
        settings_env(["inference-engine"])
