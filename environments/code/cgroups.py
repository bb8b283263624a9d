"""cgroup v1 memory, pids and cpuacct groups for one sandbox execution.

One child group per execution under `<controller>/<parent>/`, created before the run,
joined by the (still privileged) launcher shell, emptied and removed afterwards. Only
used where the hierarchy is writable (root on a v1 or hybrid host). `memory` and `pids`
are required; `cpuacct` (CPU time of the whole tree) is used when present.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

CGROUP_ROOT = Path("/sys/fs/cgroup")
REQUIRED = ("memory", "pids")
OPTIONAL = ("cpuacct",)


def _write(path: Path, value: str) -> None:
    with path.open("w") as f:
        f.write(value)


def _read_int(path: Path) -> int:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return 0


@dataclass
class RunCgroup:
    """The groups (one per controller) of one execution."""

    groups: dict[str, Path] = field(default_factory=dict)

    @property
    def procs_files(self) -> list[Path]:
        return [g / "cgroup.procs" for g in self.groups.values()]

    def peak_memory(self) -> int:
        return _read_int(self.groups["memory"] / "memory.max_usage_in_bytes")

    def cpu_seconds(self) -> float | None:
        group = self.groups.get("cpuacct")
        return None if group is None else _read_int(group / "cpuacct.usage") / 1e9

    def oom_killed(self) -> bool:
        """True when the OOM killer fired inside the group."""
        try:
            text = (self.groups["memory"] / "memory.oom_control").read_text()
        except OSError:
            return False
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip() not in ("", "0"):
                return True
        return False

    def pids_in(self) -> set[int]:
        found: set[int] = set()
        for group in self.groups.values():
            with contextlib.suppress(OSError, ValueError):
                found |= {int(x) for x in (group / "cgroup.procs").read_text().split()}
        return found

    def kill_all(self, attempts: int = 100, exclude: set[int] | None = None) -> int:
        """SIGKILL every process left in the groups (but `exclude`) until none is left;
        returns how many signals were sent."""
        killed = 0
        for _ in range(attempts):
            pids = self.pids_in() - (exclude or set())
            if not pids:
                return killed
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
            time.sleep(0.002)
        log.warning("cgroup %s still has processes after %d kill rounds", self.groups, attempts)
        return killed

    def remove(self) -> None:
        for group in self.groups.values():
            for _ in range(50):
                try:
                    group.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # busy: a dying process has not left yet
                    time.sleep(0.002)


class CgroupV1:
    """Creates per-execution groups under `<controller>/<parent>`."""

    def __init__(self, parent: str = "slipstream-sandbox", root: Path = CGROUP_ROOT) -> None:
        self.root = root
        self.parent = parent
        self.controllers: tuple[str, ...] = ()
        self.swap_accounting = False
        self._checked: bool | None = None

    def _usable(self, controller: str) -> bool:
        mount = self.root / controller
        if not (mount / "cgroup.procs").exists() or (self.root / "cgroup.controllers").exists():
            return False  # not a v1 hierarchy
        try:
            (mount / self.parent).mkdir(exist_ok=True)
        except OSError:
            return False
        return os.access(mount / self.parent, os.W_OK)

    def available(self) -> bool:
        """True when memory and pids are v1-mounted and writable by us (cached)."""
        if self._checked is None:
            ok = all(self._usable(c) for c in REQUIRED)
            if ok:
                self.controllers = REQUIRED + tuple(c for c in OPTIONAL if self._usable(c))
                memsw = self.root / "memory" / self.parent / "memory.memsw.limit_in_bytes"
                self.swap_accounting = memsw.exists()
            self._checked = ok
        return self._checked

    def create(self, name: str, memory_bytes: int, max_pids: int) -> RunCgroup:
        group = RunCgroup({c: self.root / c / self.parent / name for c in self.controllers})
        try:
            for path in group.groups.values():
                path.mkdir()
            memory = group.groups["memory"]
            _write(memory / "memory.limit_in_bytes", str(memory_bytes))
            if self.swap_accounting:
                _write(memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
            _write(group.groups["pids"] / "pids.max", str(max_pids))
        except OSError:
            group.remove()
            raise
        return group

    def sweep_stale(self) -> int:
        """Kill and remove groups left behind by a crashed server; returns how many."""
        removed = 0
        for controller in self.controllers:
            parent = self.root / controller / self.parent
            for child in [c for c in parent.iterdir() if c.is_dir()]:
                stale = RunCgroup({controller: child})
                stale.kill_all()
                stale.remove()
                removed += 1
        return removed
