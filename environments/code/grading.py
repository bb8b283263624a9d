"""Hidden-test grading of a submitted function, run inside the sandbox.

The sandbox only ever sees the test *inputs*: a driver imports the submission
(`solution.py`), calls the entry point on each input under a per-test time limit and
prints each result, strictly encoded (exact builtin types only, so objects with a
forged `__eq__` cannot pass), on lines tagged with a per-run random marker. The expected
outputs stay on the host, where the results are compared. A submission can therefore
only earn reward by computing the right outputs.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from environments.code.models import Limits, SandboxResult
from environments.code.pool import SandboxPool

ENCODER_SRC = """
def _enc(x, _depth=0):
    if _depth > 50:
        raise TypeError("result nested too deeply")
    t = type(x)
    if x is None or t is bool or t is int or t is str:
        return x
    if t is float:
        return {"float": repr(x)}
    if t is list or t is tuple:
        return [_enc(i, _depth + 1) for i in x]
    if t is dict:
        items = [[_enc(k, _depth + 1), _enc(v, _depth + 1)] for k, v in x.items()]
        return {"dict": sorted(items, key=repr)}
    if t is set or t is frozenset:
        return {"set": sorted((_enc(i, _depth + 1) for i in x), key=repr)}
    raise TypeError("unsupported result type " + t.__name__)
"""

DRIVER_TEMPLATE = """
import io as _io, json as _json, signal as _signal, sys as _sys
{encoder}
_cases = _json.loads({cases!r})
_entry = {entry!r}
_marker = {marker!r}
_per_test = {per_test!r}
_out = _sys.stdout
def _report(obj):
    _out.write("\\n" + _marker + _json.dumps(obj) + "\\n")
    _out.flush()
def _alarm(*_):
    raise TimeoutError("per-test time limit")
_ns = {{"__name__": "solution"}}
try:
    with open("solution.py") as _f:
        exec(compile(_f.read(), "solution.py", "exec"), _ns)
    _fn = _ns[_entry]
except BaseException as _exc:
    _report({{"load_error": type(_exc).__name__ + ": " + str(_exc)[:300]}})
    raise SystemExit(0)
_signal.signal(_signal.SIGALRM, _alarm)
for _i, _args in enumerate(_cases):
    _got, _err = None, None
    _sys.stdout = _io.StringIO()
    try:
        _signal.setitimer(_signal.ITIMER_REAL, _per_test)
        _got = _enc(_fn(*_args))
    except BaseException as _exc:
        _err = type(_exc).__name__
    finally:
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        _sys.stdout = _out
    _report({{"i": _i, "got": _got, "error": _err}})
"""


def encode(value: Any) -> Any:
    """The strict encoding the driver applies, for computing expected outputs."""
    namespace: dict[str, Any] = {}
    exec(ENCODER_SRC, namespace)  # our own constant source, not user input
    return namespace["_enc"](value)


@dataclass
class Grade:
    """How a submission fared on the hidden tests."""

    passed: int
    total: int
    load_error: str | None = None
    errors: dict[int, str] = field(default_factory=dict)
    sandbox: SandboxResult | None = None

    @property
    def reward(self) -> float:
        return self.passed / self.total if self.total else 0.0

    def summary(self) -> str:
        text = f"{self.passed}/{self.total} hidden tests passed"
        if self.load_error:
            text += f" (the code did not load: {self.load_error})"
        elif self.sandbox is not None and self.sandbox.status.value != "ok":
            text += f" (run ended: {self.sandbox.status.value})"
        return text


def build_driver(cases: list[list[Any]], entry: str, marker: str, per_test_s: float) -> str:
    return DRIVER_TEMPLATE.format(
        encoder=ENCODER_SRC,
        cases=json.dumps(cases),
        entry=entry,
        marker=marker,
        per_test=per_test_s,
    )


def parse_results(stdout: str, marker: str) -> tuple[dict[int, dict[str, Any]], str | None]:
    results: dict[int, dict[str, Any]] = {}
    load_error = None
    for line in stdout.splitlines():
        if not line.startswith(marker):
            continue
        try:
            obj = json.loads(line[len(marker) :])
        except ValueError:
            continue
        if "load_error" in obj:
            load_error = str(obj["load_error"])
        elif isinstance(obj.get("i"), int):
            results.setdefault(obj["i"], obj)  # the first report of a test counts
    return results, load_error


def grade(
    pool: SandboxPool,
    code: str,
    entry: str,
    cases: list[list[Any]],
    expected: list[Any],
    *,
    per_test_s: float = 1.0,
    limits: Limits | None = None,
) -> Grade:
    """Run `code`'s `entry` on every input in the sandbox; compare on the host."""
    marker = "@@grade-" + secrets.token_hex(8) + "@@"
    base = limits or pool.sandbox.settings.default_limits
    wall = min(base.wall_time_s, per_test_s * len(cases) + 3.0)
    run_limits = base.model_copy(update={"wall_time_s": wall, "cpu_time_s": wall})
    driver = build_driver(cases, entry, marker, per_test_s)
    result = pool.run_sync(driver, files={"solution.py": code}, limits=run_limits)
    results, load_error = parse_results(result.stdout, marker)
    passed, errors = 0, {}
    for i, want in enumerate(expected):
        got = results.get(i)
        if got is None:
            errors[i] = "no result"
        elif got.get("error"):
            errors[i] = str(got["error"])
        elif got.get("got") == want:
            passed += 1
    return Grade(passed, len(expected), load_error, errors, result)
