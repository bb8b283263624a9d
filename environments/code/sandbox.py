"""Run untrusted Python in a sandbox: `run_python(code, stdin, files, limits)`.

The default runner isolates each execution with bubblewrap (every namespace unshared, so
no network; read-only binds of only Debian's interpreter, its stdlib and shared
libraries; a fresh size-capped tmpfs at /work), after dropping to a per-execution
unprivileged uid with `setpriv` (as root, bwrap's `--uid` alone would only relabel root
inside a namespace), with rlimits from `prlimit` (address space, CPU seconds, processes,
file size, open files) and, where cgroup v1 is writable, a memory + pids cgroup. The wall
clock kills the whole tree. Every result names the isolation level it ran at.

    from environments.code.sandbox import run_python
    result = run_python("print(input()[::-1])", stdin="abc")
    assert result.status == "ok" and result.stdout == "cba\\n"

This module is what the reward service's unit-test verifier imports too.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath

from environments.code import bwrap
from environments.code.cgroups import CgroupV1, RunCgroup
from environments.code.models import Isolation, Limits, SandboxResult, Status
from environments.code.process import KillTree, Outcome, children_of, kill_group, memfd_with
from environments.code.process import spawn_and_collect as _spawn
from environments.code.settings import SandboxSettings

log = logging.getLogger(__name__)

__all__ = [
    "Isolation",
    "IsolationUnavailable",
    "Limits",
    "Sandbox",
    "SandboxResult",
    "Status",
    "default_sandbox",
    "run_python",
]

LAUNCH_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
SIGXCPU, SIGKILL = 24, 9
CPU_KILL_FRACTION = 0.8
FileContent = str | bytes


class IsolationUnavailable(RuntimeError):
    """The requested isolation level cannot be reached on this host."""


class SandboxBusy(RuntimeError):
    """No execution slot freed up in time."""


class UidSlots:
    """Hands out one uid per concurrent execution, so rlimit NPROC, the /proc sweep and
    file ownership never mix two executions. Within a process a condition variable guards
    the free list; across processes on one host (an environment server and a reward
    service) an exclusive `flock` per uid in `lock_dir` does, released even on a crash."""

    def __init__(self, base: int, count: int, lock_dir: str | None = None) -> None:
        self._free = list(range(base, base + count))
        self._cond = threading.Condition()
        self._lock_dir = _usable_dir(lock_dir)

    @contextlib.contextmanager
    def take(self, timeout: float | None = None) -> Iterator[int]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._cond:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not self._cond.wait_for(lambda: bool(self._free), left):
                    raise SandboxBusy("every sandbox slot is busy")
                uid, lock_fd = self._claim()
            if uid is not None:
                break
            if deadline is not None and time.monotonic() >= deadline:
                raise SandboxBusy("every sandbox uid is held by other processes")
            time.sleep(0.01)  # all free uids are held by another process on this host
        try:
            yield uid
        finally:
            if lock_fd is not None:
                os.close(lock_fd)  # releases the flock
            with self._cond:
                self._free.append(uid)
                self._cond.notify()

    def _claim(self) -> tuple[int | None, int | None]:
        """Pop a free uid not locked by another process (call with the condition held)."""
        if self._lock_dir is None:
            return self._free.pop(), None
        for uid in reversed(self._free):
            fd = os.open(f"{self._lock_dir}/uid-{uid}.lock", os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self._free.remove(uid)
            return uid, fd
        return None, None


def _usable_dir(path: str | None) -> str | None:
    if not path:
        return None
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError:
        return None
    return path if os.access(path, os.W_OK) else None


def _check_files(files: Mapping[str, FileContent]) -> list[tuple[str, bytes]]:
    checked = []
    for name, content in files.items():
        path = PurePosixPath(name)
        if path.is_absolute() or ".." in path.parts or not path.parts or name == "main.py":
            raise ValueError(f"bad file name {name!r}: use a relative path inside /work")
        data = content.encode() if isinstance(content, str) else bytes(content)
        checked.append((str(path), data))
    return checked


def kill_uid(uid: int, exclude: set[int] | frozenset[int] = frozenset()) -> int:
    """SIGKILL every process owned by `uid` (a per-execution uid: only its leftovers)."""
    killed = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) in exclude:
            continue
        with contextlib.suppress(OSError):
            if entry.stat().st_uid == uid:
                os.kill(int(entry.name), SIGKILL)
                killed += 1
    return killed


class Sandbox:
    """An execution engine at a fixed isolation level, detected once at construction.

    Thread-safe: `run` may be called from many threads; at most `settings.slots` run at
    once (the rest wait for a slot)."""

    def __init__(self, settings: SandboxSettings | None = None) -> None:
        self.settings = settings or SandboxSettings()
        self.is_root = os.geteuid() == 0
        self.layout = bwrap.interpreter_layout(
            self.settings.python, tuple(self.settings.extra_ro_binds)
        )
        self.cgroups = CgroupV1(self.settings.cgroup_parent)
        self.slots = UidSlots(
            self.settings.uid_base, self.settings.slots, self.settings.lock_dir or None
        )
        self.level = self._detect()
        log.info("sandbox isolation level: %s", self.level.value)

    # -------------------------------------------------------------- detection

    def _detect(self) -> Isolation:
        floor = self.settings.min_isolation
        cgroups = self.settings.use_cgroups and self.cgroups.available()
        if cgroups:
            self.cgroups.sweep_stale()
        candidates = [Isolation.BWRAP_CGROUP, Isolation.BWRAP, Isolation.RLIMIT]
        if not cgroups:
            candidates.remove(Isolation.BWRAP_CGROUP)
        problems: list[str] = []
        for level in candidates:
            if level.rank < floor.rank:
                break
            problem = self._probe(level)
            if problem is None:
                return level
            problems.append(f"{level.value}: {problem}")
        raise IsolationUnavailable(
            f"no isolation level >= {floor.value} works here ({'; '.join(problems) or 'none'}). "
            "Install Debian 'bubblewrap' (and run as root for cgroup limits), or set "
            "SLIPSTREAM_SANDBOX_MIN_ISOLATION=rlimit to explicitly allow weak isolation."
        )

    def _probe(self, level: Isolation) -> str | None:
        if level is not Isolation.RLIMIT and not os.access(self.settings.bwrap, os.X_OK):
            return f"{self.settings.bwrap} not found"
        try:
            result = self._run_at(level, "print(6 * 7)", b"", [], self.settings.default_limits)
        except Exception as exc:  # a failing probe is a level we cannot use
            return str(exc)
        if result.status is not Status.OK or result.stdout.strip() != "42":
            return result.error or result.stderr.strip()[-300:] or result.status.value
        return None

    # ------------------------------------------------------------------ run

    def run(
        self,
        code: str,
        stdin: FileContent = "",
        files: Mapping[str, FileContent] | None = None,
        limits: Limits | None = None,
    ) -> SandboxResult:
        """Execute `code` as /work/main.py with `files` beside it and `stdin` as input.
        Never raises for anything the code does; bad file names raise ValueError."""
        limits = (limits or self.settings.default_limits).clamp(self.settings.max_limits)
        checked = _check_files(files or {})
        data = stdin.encode() if isinstance(stdin, str) else bytes(stdin)
        try:
            return self._run_at(self.level, code, data, checked, limits)
        except SandboxBusy:
            raise
        except Exception as exc:  # the sandbox failed, not the code: report, don't crash
            log.exception("sandbox failure")
            return SandboxResult(status=Status.ERROR, isolation=self.level, error=str(exc))

    def _run_at(
        self,
        level: Isolation,
        code: str,
        stdin: bytes,
        files: list[tuple[str, bytes]],
        limits: Limits,
    ) -> SandboxResult:
        timeout = limits.wall_time_s + 30
        with self.slots.take(timeout) as uid:
            cgroup = self._cgroup(level, limits)
            try:
                if level is Isolation.RLIMIT:
                    outcome = self._run_plain(uid, cgroup, code, stdin, files, limits)
                else:
                    outcome = self._run_bwrap(uid, cgroup, code, stdin, files, limits)
                return _result(level, outcome, limits, cgroup)
            finally:
                if cgroup is not None:
                    cgroup.kill_all()
                    cgroup.remove()

    def _cgroup(self, level: Isolation, limits: Limits) -> RunCgroup | None:
        if level is not Isolation.BWRAP_CGROUP and not (
            level is Isolation.RLIMIT and self.settings.use_cgroups and self.cgroups.available()
        ):
            return None
        # the tmpfs work dir is charged to the group too
        memory = (limits.memory_mb + limits.disk_mb + 64) * bwrap.MIB
        # +2: the launcher shell and bwrap's own processes
        return self.cgroups.create(uuid.uuid4().hex, memory, limits.max_processes + 2)

    def _killer(self, cgroup: RunCgroup | None, uid: int | None, launcher_last: bool) -> KillTree:
        """Kill the tree under the launcher `pid`. With `launcher_last` (bwrap levels) the
        inside goes first and the launcher only when `final`, so bwrap reaps its own
        namespace init instead of leaving a zombie to a host init that may never reap."""

        def kill_tree(pid: int, final: bool) -> None:
            spare = {pid} if launcher_last and not final else set()
            for child in children_of(pid):
                with contextlib.suppress(OSError):
                    os.kill(child, SIGKILL)
            if cgroup is not None:
                cgroup.kill_all(exclude=spare)
            elif uid is not None:
                kill_uid(uid, exclude=spare)
            if final or not launcher_last:
                kill_group(pid)

        return kill_tree

    def _run_bwrap(
        self,
        uid: int,
        cgroup: RunCgroup | None,
        code: str,
        stdin: bytes,
        files: list[tuple[str, bytes]],
        limits: Limits,
    ) -> Outcome:
        contents = [("main.py", code.encode()), *files]
        fds = [memfd_with(name, data) for name, data in contents]
        stdin_fd = memfd_with("stdin", stdin)
        try:
            spec = bwrap.LaunchSpec(
                limits=limits,
                uid=uid if self.is_root else None,
                cgroup_procs=cgroup.procs_files if cgroup else (),
                files=list(zip(fds, [name for name, _ in contents], strict=True)),
            )
            argv = bwrap.sandbox_argv(self.layout, spec, self.settings.bwrap)
            sweep = uid if self.is_root else None
            return self._spawn(argv, stdin_fd, fds, limits, self._killer(cgroup, sweep, True))
        finally:
            for fd in (*fds, stdin_fd):
                os.close(fd)

    def _run_plain(
        self,
        uid: int,
        cgroup: RunCgroup | None,
        code: str,
        stdin: bytes,
        files: list[tuple[str, bytes]],
        limits: Limits,
    ) -> Outcome:
        workdir = Path(tempfile.mkdtemp(prefix="sandbox-", dir=self.settings.workdir_base))
        stdin_fd = memfd_with("stdin", stdin)
        try:
            for name, data in [("main.py", code.encode()), *files]:
                target = workdir / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            drop = uid if self.is_root else None
            if drop is not None:
                for path in [workdir, *workdir.rglob("*")]:
                    os.chown(path, drop, drop)
            spec = bwrap.LaunchSpec(
                limits=limits, uid=drop, cgroup_procs=cgroup.procs_files if cgroup else ()
            )
            argv = bwrap.plain_argv(self.layout, spec, workdir)
            return self._spawn(argv, stdin_fd, [], limits, self._killer(cgroup, drop, False))
        finally:
            os.close(stdin_fd)
            shutil.rmtree(workdir, ignore_errors=True)

    def _spawn(
        self,
        argv: list[str],
        stdin_fd: int,
        fds: list[int],
        limits: Limits,
        kill_tree: KillTree,
    ) -> Outcome:
        argv[0] = shutil.which(argv[0], path=LAUNCH_ENV["PATH"]) or argv[0]
        return _spawn(
            argv,
            env=LAUNCH_ENV,
            stdin_fd=stdin_fd,
            pass_fds=fds,
            wall_time_s=limits.wall_time_s,
            max_output_bytes=limits.max_output_bytes,
            kill_tree=kill_tree,
        )

    def describe(self) -> dict[str, str]:
        """The isolation in force, for /readyz and logs."""
        return {
            "isolation": self.level.value,
            "uid_drop": str(self.is_root),
            "python": self.layout.python,
            "cgroup": "v1" if self.level is Isolation.BWRAP_CGROUP else "none",
        }


# ----------------------------------------------------------------- classification


def _signal_of(level: Isolation, exit_code: int) -> int | None:
    if exit_code < 0:
        return -exit_code
    # bwrap exits 128 + n when its child died of signal n
    if level is not Isolation.RLIMIT and 128 < exit_code <= 128 + 64:
        return exit_code - 128
    return None


def _classify(
    outcome: Outcome, limits: Limits, cpu: float, sig: int | None, oom: bool, stderr: str
) -> Status:
    if outcome.timed_out:
        return Status.TIMEOUT
    if oom:
        return Status.MEMORY
    # the CPU rlimit (soft = hard) ends in SIGKILL; the measured tree CPU may read a bit
    # below the kernel's own accounting at that instant
    if sig == SIGXCPU or (sig == SIGKILL and cpu >= CPU_KILL_FRACTION * limits.cpu_time_s):
        return Status.TIMEOUT
    if sig is not None:
        return Status.KILLED
    if outcome.exit_code == 0:
        return Status.OK
    tail = stderr.rstrip().rsplit("\n", 1)[-1]
    if tail.startswith("MemoryError"):
        return Status.MEMORY
    return Status.ERROR


def _result(
    level: Isolation, outcome: Outcome, limits: Limits, cgroup: RunCgroup | None
) -> SandboxResult:
    ru = outcome.rusage
    cpu = (ru.ru_utime + ru.ru_stime) if ru is not None else 0.0  # type: ignore[attr-defined]
    tree_cpu = cgroup.cpu_seconds() if cgroup is not None else None
    cpu = cpu if tree_cpu is None else tree_cpu
    # Linux carries a process's RSS high-water mark across exec, so the child's ru_maxrss
    # starts at whatever this (possibly large) server process held when it forked. The
    # cgroup's peak is the true figure; ru_maxrss is only the fallback without a cgroup.
    peak = cgroup.peak_memory() if cgroup is not None else None
    rss = (ru.ru_maxrss * 1024) if ru is not None else 0  # type: ignore[attr-defined]
    oom = cgroup.oom_killed() if cgroup is not None else False
    code = outcome.exit_code
    sig = None if code is None or outcome.timed_out else _signal_of(level, code)
    stderr = outcome.stderr.text()
    status = _classify(outcome, limits, cpu, sig, oom, stderr)
    return SandboxResult(
        status=status,
        exit_code=None if (outcome.timed_out or sig is not None) else code,
        signal=sig,
        stdout=outcome.stdout.text(),
        stderr=stderr,
        stdout_truncated=outcome.stdout.truncated,
        stderr_truncated=outcome.stderr.truncated,
        wall_time_s=round(outcome.wall_time_s, 6),
        cpu_time_s=round(cpu, 6),
        memory_bytes=peak if peak else rss,
        isolation=level,
    )


# ------------------------------------------------------------------ module API

_default: Sandbox | None = None
_default_lock = threading.Lock()


def default_sandbox() -> Sandbox:
    """A process-wide Sandbox built from `SandboxSettings()` (env vars), on first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Sandbox()
        return _default


def run_python(
    code: str,
    stdin: FileContent = "",
    files: Mapping[str, FileContent] | None = None,
    limits: Limits | None = None,
) -> SandboxResult:
    """Run `code` in the process-wide sandbox (see `Sandbox.run`)."""
    return default_sandbox().run(code, stdin, files, limits)
