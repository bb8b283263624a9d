"""`slipstream up` starts real service processes; `down` leaves none behind."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from support.procs import free_port

SERVICES = ["reward", "replay"]


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "services.cli.main", *args],
        env=env, capture_output=True, text=True, timeout=120,
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(
        f"/proc/{pid}/status"
    ).read_text().lower()


@pytest.fixture
def stack_env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "SLIPSTREAM_HOME": str(tmp_path)}
    for name in SERVICES:
        env[f"SLIPSTREAM_{name.upper()}_PORT"] = str(free_port())
    return env


def test_up_serves_health_and_metrics_then_down_leaves_nothing(
    stack_env: dict[str, str], tmp_path: Path
) -> None:
    selection = [arg for name in SERVICES for arg in ("-s", name)]
    up = _cli(["up", "-d", *selection, "--timeout", "60"], stack_env)
    pids = {name: int((tmp_path / "run" / f"{name}.pid").read_text()) for name in SERVICES}
    try:
        assert up.returncode == 0, up.stderr
        for name in SERVICES:
            base = f"http://127.0.0.1:{stack_env[f'SLIPSTREAM_{name.upper()}_PORT']}"
            assert httpx.get(base + "/healthz", timeout=5).json()["service"] == name
            metrics = httpx.get(base + "/metrics", timeout=5)
            assert metrics.status_code == 200
            assert f"slipstream_{name}_http_requests_total" in metrics.text
            assert (tmp_path / "logs" / f"{name}.log").exists()
        status = _cli(["status"], stack_env)
        assert status.returncode == 0
        for name in SERVICES:
            line = next(ln for ln in status.stdout.splitlines() if ln.startswith(name))
            assert str(pids[name]) in line and "yes" in line
    finally:
        down = _cli(["down"], stack_env)
    assert down.returncode == 0, down.stderr
    for name, pid in pids.items():
        assert not _alive(pid), f"{name} (pid {pid}) survived `slipstream down`"
        assert not (tmp_path / "run" / f"{name}.pid").exists()


def test_unknown_service_is_rejected(stack_env: dict[str, str]) -> None:
    result = _cli(["up", "-d", "-s", "nonesuch"], stack_env)
    assert result.returncode == 1
    assert "unknown service" in result.stderr


def test_foreground_up_stops_its_services_on_ctrl_c(
    stack_env: dict[str, str], tmp_path: Path
) -> None:
    proc = _foreground_up(stack_env)
    lines = []
    for line in proc.stdout:  # type: ignore[union-attr]
        lines.append(line)
        if line.startswith("Ctrl-C stops"):
            break
    service_pid = int((tmp_path / "run" / "reward.pid").read_text())
    proc.send_signal(signal.SIGINT)
    out = "".join(lines) + proc.communicate(timeout=60)[0]
    assert proc.returncode == 0, out
    assert "stopped reward" in out
    assert not _alive(service_pid)


def test_ctrl_c_during_start_leaves_nothing_behind(
    stack_env: dict[str, str], tmp_path: Path
) -> None:
    proc = _foreground_up(stack_env)
    pid_file = tmp_path / "run" / "reward.pid"
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    service_pid = int(pid_file.read_text())
    proc.send_signal(signal.SIGINT)  # before the service answers /healthz
    out = proc.communicate(timeout=60)[0]
    assert "stopped reward" in out, out
    assert not _alive(service_pid)


def _foreground_up(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "services.cli.main", "up", "-s", "reward"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
