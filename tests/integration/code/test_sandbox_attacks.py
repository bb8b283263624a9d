"""The attack suite: hostile programs against the real sandbox (bubblewrap; as root in CI
also setpriv + cgroups). Each is contained, reported with a clear status, and leaves the
host and the next execution unaffected. The isolation level is printed in the output."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import pytest

from environments.code.cgroups import CgroupV1
from environments.code.models import Isolation, Limits, Status
from environments.code.sandbox import Sandbox

ATTACK_LIMITS = Limits(
    wall_time_s=4, cpu_time_s=2, memory_mb=256, max_processes=16, disk_mb=16,
    max_file_size_mb=64, max_output_bytes=4096,
)  # fmt: skip

PROJECT_FILE = Path(__file__).resolve().parents[3] / "pyproject.toml"


def run(sandbox: Sandbox, code: str, **overrides: object):  # type: ignore[no-untyped-def]
    limits = ATTACK_LIMITS.model_copy(update=overrides)
    result = sandbox.run(code, limits=limits)
    print(
        f"[{result.isolation.value}] status={result.status.value} exit={result.exit_code} "
        f"signal={result.signal} wall={result.wall_time_s:.2f}s cpu={result.cpu_time_s:.2f}s"
    )
    return result


def test_isolation_is_bubblewrap(sandbox: Sandbox) -> None:
    assert sandbox.level.rank >= Isolation.BWRAP.rank
    if os.geteuid() == 0 and CgroupV1(sandbox.settings.cgroup_parent).available():
        assert sandbox.level is Isolation.BWRAP_CGROUP, "root on a cgroup v1 host: expect cgroups"
    result = run(sandbox, "import os; print(os.getuid())")
    assert result.isolation is sandbox.level


def test_fork_bomb(sandbox: Sandbox, assert_contained) -> None:  # type: ignore[no-untyped-def]
    code = (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    started = time.monotonic()
    result = run(sandbox, code)
    assert result.status in (Status.TIMEOUT, Status.KILLED, Status.MEMORY), result
    assert time.monotonic() - started < ATTACK_LIMITS.wall_time_s + 5
    assert_contained()


def test_memory_bomb_one_allocation(sandbox: Sandbox, assert_contained) -> None:  # type: ignore[no-untyped-def]
    result = run(sandbox, "x = bytearray(8 * 1024**3)\nprint('allocated')")
    assert result.status is Status.MEMORY, result
    assert "allocated" not in result.stdout
    assert_contained()


def test_memory_bomb_gradual(sandbox: Sandbox, assert_contained) -> None:  # type: ignore[no-untyped-def]
    code = "chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024**2))\n"
    result = run(sandbox, code)
    assert result.status is Status.MEMORY, result
    assert result.memory_bytes <= (ATTACK_LIMITS.memory_mb + ATTACK_LIMITS.disk_mb + 64) * 2**20
    assert_contained()


def test_infinite_cpu_loop(sandbox: Sandbox, assert_contained) -> None:  # type: ignore[no-untyped-def]
    result = run(sandbox, "while True:\n    pass\n")
    assert result.status is Status.TIMEOUT, result
    assert result.wall_time_s < ATTACK_LIMITS.wall_time_s + 1
    assert_contained()


def test_sleeping_forever_hits_wall_clock(sandbox: Sandbox, assert_contained) -> None:  # type: ignore[no-untyped-def]
    result = run(
        sandbox, "import time\nprint('start', flush=True)\ntime.sleep(3600)\n", wall_time_s=1.5
    )
    assert result.status is Status.TIMEOUT, result
    assert result.stdout == "start\n"
    assert 1.5 <= result.wall_time_s < 3.5
    assert_contained()


def test_writing_outside_the_work_dir(sandbox: Sandbox, assert_contained) -> None:  # type: ignore[no-untyped-def]
    marker = f"slipstream-attack-{os.getpid()}"
    targets = ["/usr/lib/python3.11/os.py", "/etc/passwd", f"/{marker}", f"/root/{marker}",
               f"/usr/{marker}", f"/dev/{marker}", "/proc/sys/kernel/hostname",
               f"/var/tmp/{marker}", f"{PROJECT_FILE.parent}/{marker}"]  # fmt: skip
    code = (
        "import json\nout = {}\n"
        f"for path in {targets!r}:\n"
        "    try:\n"
        "        with open(path, 'a') as f:\n"
        "            f.write('pwned')\n"
        "        out[path] = 'written'\n"
        "    except OSError as exc:\n"
        "        out[path] = type(exc).__name__\n"
        "open('/work/inside.txt', 'w').write('fine')\n"
        "print(json.dumps(out))\n"
    )
    result = run(sandbox, code)
    assert result.status is Status.OK, result
    outcome = json.loads(result.stdout)
    assert all(v != "written" for v in outcome.values()), outcome
    for host_path in (f"/{marker}", f"/root/{marker}", f"/usr/{marker}", f"/var/tmp/{marker}",
                      f"{PROJECT_FILE.parent}/{marker}"):  # fmt: skip
        assert not Path(host_path).exists()
    assert b"pwned" not in Path("/etc/passwd").read_bytes()
    assert_contained()


def test_reading_host_files(sandbox: Sandbox, assert_contained, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SLIPSTREAM_ATTACK_SECRET", "hunter2")
    targets = ["/etc/shadow", "/etc/passwd", "/root", "/root/.bashrc", str(PROJECT_FILE),
               str(PROJECT_FILE.parent), "/home", "/sys/kernel"]  # fmt: skip
    code = (
        "import json, os\nout = {}\n"
        f"for path in {targets!r}:\n"
        "    try:\n"
        "        out[path] = os.listdir(path) if os.path.isdir(path) else open(path).read()\n"
        "    except OSError as exc:\n"
        "        out[path] = type(exc).__name__\n"
        "env = ''\n"
        "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
        "    try:\n"
        "        env += open(f'/proc/{pid}/environ').read()\n"
        "    except OSError:\n"
        "        pass\n"
        "out['environ'] = env\n"
        "out['root_listing'] = sorted(os.listdir('/'))\n"
        "print(json.dumps(out))\n"
    )
    result = run(sandbox, code)
    assert result.status is Status.OK, result
    assert "hunter2" not in result.stdout
    out = json.loads(result.stdout)
    for path in targets:
        assert out[path] in ("FileNotFoundError", "PermissionError", []), (path, out[path])
    assert set(out["root_listing"]) <= {"usr", "bin", "lib", "lib64", "sbin", "dev", "proc",
                                         "work", "tmp", "lib32", "libx32"}  # fmt: skip
    assert_contained()


def test_sockets_fail_immediately(sandbox: Sandbox, assert_contained) -> None:  # type: ignore[no-untyped-def]
    # A listener on the host's loopback: the sandbox must not reach it. The outside
    # address is TEST-NET-3 (RFC 5737); with no network namespace route nothing leaves.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    code = (
        "import json, socket, time\nout = {}\n"
        f"targets = [('loopback', ('127.0.0.1', {port})), ('outside', ('203.0.113.7', 80))]\n"
        "for name, addr in targets:\n"
        "    t = time.monotonic()\n"
        "    try:\n"
        "        socket.create_connection(addr, timeout=3).close()\n"
        "        out[name] = ['connected', 0]\n"
        "    except OSError as exc:\n"
        "        out[name] = [exc.errno, time.monotonic() - t]\n"
        "try:\n"
        "    socket.getaddrinfo('example.com', 80)\n"
        "    out['dns'] = 'resolved'\n"
        "except OSError as exc:\n"
        "    out['dns'] = type(exc).__name__\n"
        "try:\n"
        "    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('203.0.113.7', 53))\n"
        "    out['udp'] = 'sent'\n"
        "except OSError as exc:\n"
        "    out['udp'] = exc.errno\n"
        "print(json.dumps(out))\n"
    )
    try:
        result = run(sandbox, code)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody reached the host listener
    finally:
        listener.close()
    assert result.status is Status.OK, result
    out = json.loads(result.stdout)
    import errno

    assert out["loopback"][0] == errno.ECONNREFUSED and out["loopback"][1] < 0.5, out
    assert out["outside"][0] == errno.ENETUNREACH and out["outside"][1] < 0.5, out
    assert out["dns"] != "resolved" and out["udp"] == errno.ENETUNREACH, out
    assert_contained()


def test_killing_the_parent(sandbox: Sandbox, assert_contained) -> None:  # type: ignore[no-untyped-def]
    host_pid = os.getpid()
    code = (
        "import os, signal\n"
        "for target in (" + str(host_pid) + ", os.getppid(), 1, -1):\n"
        "    try:\n"
        "        os.kill(target, signal.SIGKILL)\n"
        "        print('sent', target, flush=True)\n"
        "    except OSError as exc:\n"
        "        print('denied', target, type(exc).__name__, flush=True)\n"
        "import time; time.sleep(10)\n"
    )
    result = run(sandbox, code)
    assert result.status in (Status.KILLED, Status.TIMEOUT, Status.OK, Status.ERROR), result
    assert result.status is not Status.OK or "sent" not in result.stdout
    assert f"sent {host_pid}" not in result.stdout  # the host pid is not even visible
    os.kill(host_pid, 0)  # we are alive
    assert_contained()


def test_filling_the_disk(sandbox: Sandbox, assert_contained) -> None:  # type: ignore[no-untyped-def]
    free_before = os.statvfs("/").f_bavail
    code = (
        "import errno\nwritten = 0\nblock = b'x' * (1 << 20)\n"
        "try:\n"
        "    with open('/work/fill', 'wb') as f:\n"
        "        while written < (1 << 34):\n"
        "            f.write(block)\n"
        "            f.flush()\n"
        "            written += len(block)\n"
        "except OSError as exc:\n"
        "    print(errno.errorcode[exc.errno], written >> 20)\n"
    )
    result = run(sandbox, code)
    assert result.status in (Status.OK, Status.ERROR), result
    err, mib = result.stdout.split()
    assert err in ("ENOSPC", "EFBIG"), result.stdout
    assert int(mib) <= ATTACK_LIMITS.disk_mb
    assert abs(os.statvfs("/").f_bavail - free_before) * os.statvfs("/").f_frsize < 64 * 2**20
    assert_contained()


def test_background_processes_do_not_survive(sandbox: Sandbox, assert_contained) -> None:  # type: ignore[no-untyped-def]
    code = (
        "import os, subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)'],\n"
        "                 start_new_session=True, stdout=subprocess.DEVNULL)\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        while True:\n"
        "            time.sleep(0.1)\n"
        "    os._exit(0)\n"
        "time.sleep(0.3)\n"
        "print('parent done')\n"
    )
    result = run(sandbox, code)
    assert result.status is Status.OK, result
    assert result.stdout == "parent done\n"
    assert result.wall_time_s < 2.0  # did not wait for the daemons
    assert_contained()


def test_output_flood_is_capped(sandbox: Sandbox, assert_contained) -> None:  # type: ignore[no-untyped-def]
    result = run(
        sandbox,
        "import sys\nfor _ in range(20000):\n    sys.stdout.write('y' * 1000)\n"
        "sys.stderr.write('e' * 100000)\n",
    )
    assert result.status is Status.OK, result
    assert len(result.stdout) == ATTACK_LIMITS.max_output_bytes and result.stdout_truncated
    assert len(result.stderr) == ATTACK_LIMITS.max_output_bytes and result.stderr_truncated
    assert_contained()


def test_runs_do_not_see_each_other(sandbox: Sandbox) -> None:
    first = sandbox.run("open('/work/secret.txt', 'w').write('gold')", limits=ATTACK_LIMITS)
    second = sandbox.run("import os; print(sorted(os.listdir('/work')))", limits=ATTACK_LIMITS)
    assert first.ok and second.ok
    assert second.stdout.strip() == "['main.py']"
