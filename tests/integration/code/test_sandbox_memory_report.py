"""The reported peak memory is the sandboxed program's, not the (large) calling process's.

Linux carries a process's RSS high-water mark across exec, so a child's ru_maxrss starts at
what its parent held at fork. A server that has loaded a model would otherwise report every
tiny program as using hundreds of MiB.
"""

import json
import subprocess
import sys

import pytest

from environments.code.sandbox import default_sandbox

PROBE = """
import json
ballast = bytearray(400 * 1024**2)
for i in range(0, len(ballast), 4096):
    ballast[i] = 1
from environments.code.sandbox import run_python
r = run_python("x = [0] * 10")
print(json.dumps({"status": r.status.value, "mem": r.memory_bytes, "level": r.isolation.value}))
"""


def test_small_program_reports_small_memory_from_a_big_parent() -> None:
    if "cgroup" not in default_sandbox().level.value:
        pytest.skip("needs cgroup memory accounting (v1, writable)")
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["status"] == "ok"
    assert result["mem"] < 100 * 2**20, result
