"""Sandbox building blocks that need no bubblewrap: limits, command lines, capture,
result classification, request schemas."""

from __future__ import annotations

import base64
import os

import pytest

from environments.code import bwrap
from environments.code.models import Isolation, Limits, Status
from environments.code.process import Capture, Outcome
from environments.code.sandbox import _check_files, _classify, _signal_of
from environments.code.schemas import LimitsPatch, RunCodeRequest


def test_limits_clamp_to_ceiling() -> None:
    ceiling = Limits(wall_time_s=5, memory_mb=256)
    clamped = Limits(wall_time_s=50, memory_mb=128, disk_mb=999).clamp(ceiling)
    assert clamped.wall_time_s == 5 and clamped.memory_mb == 128
    assert clamped.disk_mb == ceiling.disk_mb


def test_limits_patch_keeps_defaults() -> None:
    base = Limits(wall_time_s=3)
    assert LimitsPatch(memory_mb=64).over(base) == Limits(wall_time_s=3, memory_mb=64)


def test_interpreter_layout_binds_only_interpreter_paths() -> None:
    layout = bwrap.interpreter_layout("/usr/bin/python3")
    assert layout.python == "/usr/bin/python3"
    assert any(d.startswith("/usr/lib/python3") for d in layout.dirs)
    for forbidden in ("/", "/etc", "/root", "/home", "/usr", "/work", "/tmp", "/proc"):
        assert forbidden not in layout.dirs


def test_bwrap_command_line_unshares_everything_and_drops_privileges() -> None:
    layout = bwrap.interpreter_layout("/usr/bin/python3")
    limits = Limits(memory_mb=100, cpu_time_s=2.5, max_processes=7, disk_mb=5)
    spec = bwrap.LaunchSpec(limits=limits, uid=61003, files=[(12, "pkg/data.txt")])
    argv = bwrap.sandbox_argv(layout, spec)
    joined = " ".join(argv)
    assert argv[0] == "prlimit" and f"--as={100 * 2**20}" in argv and "--cpu=3:3" in argv
    assert "--nproc=7" in argv
    assert argv.index("setpriv") < argv.index("bwrap")
    assert "--reuid=61003" in argv and "--no-new-privs" in argv
    for flag in ("--unshare-all", "--die-with-parent", "--new-session", "--clearenv"):
        assert flag in argv
    assert "--share-net" not in argv and "--bind " not in joined
    assert f"--size {5 * 2**20} --tmpfs /work" in joined
    assert "--dir /work/pkg --file 12 /work/pkg/data.txt" in joined
    assert argv[-5:] == ["/usr/bin/python3", "-E", "-s", "-B", "main.py"]


def test_cgroup_join_shell_runs_before_everything() -> None:
    layout = bwrap.interpreter_layout("/usr/bin/python3")
    procs = ["/sys/fs/cgroup/memory/x/cgroup.procs", "/sys/fs/cgroup/pids/x/cgroup.procs"]
    spec = bwrap.LaunchSpec(limits=Limits(), uid=None, cgroup_procs=procs)  # type: ignore[arg-type]
    argv = bwrap.sandbox_argv(layout, spec)
    assert argv[:2] == ["/bin/sh", "-c"] and argv[4:6] == procs
    assert argv[6] == "prlimit" and "setpriv" not in argv


@pytest.mark.parametrize("name", ["/etc/passwd", "../x", "a/../../x", "main.py", ""])
def test_file_names_must_stay_inside_work(name: str) -> None:
    with pytest.raises(ValueError):
        _check_files({name: "x"})


def test_capture_truncates() -> None:
    cap = Capture(5)
    cap.feed(b"abc")
    cap.feed(b"defg")
    assert cap.text() == "abcde" and cap.truncated


def _outcome(status: int, timed_out: bool = False, stderr: str = "") -> Outcome:
    err = Capture(1000)
    err.feed(stderr.encode())
    return Outcome(status, None, timed_out, Capture(10), err, 0.1)


def test_classification() -> None:
    lim = Limits(cpu_time_s=2)
    assert _classify(_outcome(0), lim, 0.1, None, False, "") is Status.OK
    assert _classify(_outcome(256), lim, 0.1, None, False, "Traceback\nValueError") is Status.ERROR
    mem = "Traceback\nMemoryError\n"
    assert _classify(_outcome(256), lim, 0.1, None, False, mem) is Status.MEMORY
    assert _classify(_outcome(0, timed_out=True), lim, 0.1, None, False, "") is Status.TIMEOUT
    assert _classify(_outcome(9), lim, 0.1, None, True, "") is Status.MEMORY
    assert _classify(_outcome(9), lim, 1.9, 9, False, "") is Status.TIMEOUT
    assert _classify(_outcome(9), lim, 0.1, 9, False, "") is Status.KILLED


def test_signal_decoding() -> None:
    assert _signal_of(Isolation.BWRAP, 137) == 9
    assert _signal_of(Isolation.BWRAP, 1) is None
    assert _signal_of(Isolation.RLIMIT, -9) == 9
    assert _signal_of(Isolation.RLIMIT, 137) is None
    assert os.waitstatus_to_exitcode(9) == -9


def test_run_code_request_files() -> None:
    req = RunCodeRequest(
        code="print(1)",
        files={"a.txt": "hi"},
        files_base64={"b.bin": base64.b64encode(b"\x00\x01").decode()},
    )
    assert req.all_files() == {"a.txt": "hi", "b.bin": b"\x00\x01"}
    with pytest.raises(ValueError):
        RunCodeRequest(code="", files_base64={"x": "!!"}).all_files()


def test_uid_slots_are_exclusive_across_instances(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from environments.code.sandbox import SandboxBusy, UidSlots

    a = UidSlots(70000, 2, str(tmp_path))
    b = UidSlots(70000, 2, str(tmp_path))  # another process on the host, in effect
    with a.take(1) as first, b.take(1) as second:
        assert first != second
        with pytest.raises(SandboxBusy), b.take(0.05):
            pass
    with b.take(1) as again:
        assert again in (70000, 70001)
