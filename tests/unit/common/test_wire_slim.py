"""The wire schemas must stay importable without any deep-learning stack."""

import json
import subprocess
import sys

HEAVY = ["torch", "vllm", "transformers", "numpy", "safetensors"]


def test_wire_and_jobspec_import_no_heavy_modules() -> None:
    code = (
        "import json, sys\n"
        "import services.common.wire, services.common.jobspec\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == []
