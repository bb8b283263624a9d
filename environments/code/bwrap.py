"""Command lines for the sandbox: which host paths the interpreter needs, and the
launcher chain `sh (join cgroups) -> prlimit -> setpriv -> bwrap -> python3`."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from environments.code.models import Limits

MIB = 2**20
WORK = "/work"
MERGED_USR_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_LDD_PATH = re.compile(r"(?:=>\s*)?(/\S+)\s+\(0x")


@dataclass(frozen=True)
class InterpreterLayout:
    """What must be visible inside the sandbox for the interpreter to start."""

    python: str  # the path the program is run with, e.g. /usr/bin/python3
    real_python: str  # where it lives on the host, e.g. /usr/bin/python3.11
    dirs: tuple[str, ...]  # directories bound read-only (stdlib, shared libraries)
    symlinks: tuple[tuple[str, str], ...]  # (target, link): merged-/usr links


def _ldd_paths(binary: str) -> list[str]:
    out = subprocess.run(
        ["ldd", binary], capture_output=True, text=True, timeout=10, check=True
    ).stdout
    return [m.group(1) for m in _LDD_PATH.finditer(out)]


def _stdlib(python: str) -> list[str]:
    code = "import sysconfig as s; p = s.get_paths(); print(p['stdlib']); print(p['platstdlib'])"
    out = subprocess.run(
        [python, "-E", "-s", "-c", code], capture_output=True, text=True, timeout=10, check=True
    ).stdout
    return [line for line in out.splitlines() if line]


def _minimal(dirs: set[str]) -> tuple[str, ...]:
    """Drop directories already covered by a bound parent."""
    kept: list[str] = []
    for d in sorted(dirs, key=len):
        if not any(d == k or d.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(d)
    return tuple(sorted(kept))


@lru_cache(maxsize=8)
def interpreter_layout(python: str, extra: tuple[str, ...] = ()) -> InterpreterLayout:
    """Discover the read-only binds `python` needs: its stdlib and the directories of its
    shared libraries (via ldd), plus the host's merged-/usr symlinks."""
    real = os.path.realpath(python)
    dirs: set[str] = set(_stdlib(real)) | {os.path.realpath(p) for p in extra}
    for lib in _ldd_paths(real):
        dirs.add(os.path.dirname(os.path.realpath(lib)))
        dirs.add(os.path.realpath(os.path.dirname(lib)))
    links = tuple((os.readlink(p), p) for p in MERGED_USR_LINKS if os.path.islink(p))
    dirs = {d for d in dirs if os.path.isdir(d) and d not in {p for _, p in links}}
    return InterpreterLayout(python, real, _minimal(dirs), links)


@dataclass
class LaunchSpec:
    """Everything that varies per execution."""

    limits: Limits
    uid: int | None  # drop to this uid/gid before entering; None: stay as we are
    cgroup_procs: Sequence[Path] = ()  # join these cgroup.procs files first (as root)
    files: Sequence[tuple[int, str]] = ()  # (fd in the child, path relative to /work)
    script: str = "main.py"
    argv: Sequence[str] = field(default_factory=list)  # extra arguments to the program


def prlimit_args(limits: Limits) -> list[str]:
    cpu = max(1, int(limits.cpu_time_s + 0.999))
    return [
        "prlimit",
        f"--as={limits.memory_mb * MIB}",
        f"--cpu={cpu}:{cpu}",
        f"--nproc={limits.max_processes}",
        f"--fsize={limits.max_file_size_mb * MIB}",
        f"--nofile={limits.max_open_files}",
        "--core=0",
        "--",
    ]


def setpriv_args(uid: int) -> list[str]:
    return [
        "setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
    ]


def cgroup_join_args(procs: Sequence[Path]) -> list[str]:
    """A root shell that moves itself into the groups, then execs the rest of argv."""
    joins = " && ".join(f'echo $$ > "${i + 1}"' for i in range(len(procs)))
    script = f'{joins} && shift {len(procs)} && exec "$@"'
    return ["/bin/sh", "-c", script, "sandbox-join", *map(str, procs)]


def _dirs_for(files: Sequence[tuple[int, str]]) -> list[str]:
    parents: set[str] = set()
    for _, rel in files:
        parts = Path(rel).parts[:-1]
        for i in range(1, len(parts) + 1):
            parents.add("/".join(parts[:i]))
    return sorted(parents, key=lambda p: (p.count("/"), p))


def bwrap_args(layout: InterpreterLayout, spec: LaunchSpec, bwrap: str = "bwrap") -> list[str]:
    disk = spec.limits.disk_mb * MIB
    args = [
        bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
        "--new-session", "--as-pid-1", "--cap-drop", "ALL", "--uid", "1000", "--gid", "1000",
        "--hostname", "sandbox", "--clearenv",
        "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", WORK,
        "--setenv", "TMPDIR", WORK, "--setenv", "LANG", "C.UTF-8",
    ]  # fmt: skip
    for d in layout.dirs:
        args += ["--ro-bind", d, d]
    args += ["--ro-bind", layout.real_python, layout.python]
    for target, link in layout.symlinks:
        args += ["--symlink", target, link]
    args += ["--dev", "/dev", "--remount-ro", "/dev", "--proc", "/proc"]
    args += ["--size", str(disk), "--tmpfs", WORK]
    args += ["--symlink", WORK, "/tmp"]
    for d in _dirs_for(spec.files):
        args += ["--dir", f"{WORK}/{d}"]
    for fd, rel in spec.files:
        args += ["--file", str(fd), f"{WORK}/{rel}"]
    args += ["--remount-ro", "/", "--chdir", WORK, "--"]
    return [*args, layout.python, "-E", "-s", "-B", spec.script, *spec.argv]


def _launcher_prefix(spec: LaunchSpec) -> list[str]:
    """What every level runs first: join the cgroup (if any), set the rlimits, drop to the
    run's uid (if any)."""
    argv: list[str] = []
    if spec.cgroup_procs:
        argv += cgroup_join_args(spec.cgroup_procs)
    argv += prlimit_args(spec.limits)
    if spec.uid is not None:
        argv += setpriv_args(spec.uid)
    return argv


def sandbox_argv(layout: InterpreterLayout, spec: LaunchSpec, bwrap: str = "bwrap") -> list[str]:
    """The full launcher chain for the bwrap levels."""
    return _launcher_prefix(spec) + bwrap_args(layout, spec, bwrap)


def plain_argv(layout: InterpreterLayout, spec: LaunchSpec, workdir: Path) -> list[str]:
    """The launcher chain for the weak `rlimit` level (no namespaces)."""
    argv = _launcher_prefix(spec)
    env = ["env", "-i", "-C", str(workdir), "PATH=/usr/bin:/bin", f"HOME={workdir}",
           f"TMPDIR={workdir}", "LANG=C.UTF-8"]  # fmt: skip
    return argv + env + [layout.python, "-E", "-s", "-B", spec.script, *spec.argv]
