"""Bodies of the `slipstream` commands (imported lazily by `services.cli.main`)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import typer

from services.cli import stack
from services.common.jobspec import JobSpec, JobSpecError, load_job_spec
from services.common.paths import logs_dir, slipstream_home
from services.common.topology import ServiceEntry


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code)


def settings_env(assignments: list[str]) -> dict[str, str]:
    """`inference.engine__type=hf` -> {'SLIPSTREAM_INFERENCE_ENGINE__TYPE': 'hf'}."""
    env: dict[str, str] = {}
    for item in assignments:
        key, sep, value = item.partition("=")
        service, dot, field = key.partition(".")
        if not sep or not dot or not field:
            raise _fail(f"--set expects SERVICE.FIELD=VALUE, got '{item}'")
        env[f"SLIPSTREAM_{service.upper()}_{field.upper()}"] = value
    return env


def _start(services: list[str] | None, assignments: list[str], timeout: float) -> list[str]:
    """Start the selected services that are not already up; returns those started. An
    interrupt or a failed start stops what this call had started (nothing is left behind)."""
    try:
        entries = stack.select(services)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    env = settings_env(assignments)
    started: list[str] = []
    try:
        for entry in entries:
            current = stack.state(entry)
            if current.healthy:
                continue
            if current.alive:
                stack.stop_service(entry.name)
            pid = stack.start_service(entry, env)
            typer.echo(f"started {entry.name:<13} pid {pid:<7} http://127.0.0.1:{entry.port}")
            started.append(entry.name)
        _wait_started(entries, started, timeout)
    except BaseException:
        down(started)
        raise
    return started


def _wait_started(entries: list[ServiceEntry], started: list[str], timeout: float) -> None:
    unhealthy = stack.wait_healthy((e for e in entries if e.name in started), timeout, "/healthz")
    if unhealthy:
        for name in unhealthy:
            typer.secho(f"--- {name} did not become healthy; log tail:", fg="red", err=True)
            typer.echo(stack.log_tail(name), err=True)
        raise _fail(f"services not healthy: {', '.join(unhealthy)} (logs in {logs_dir()})")
    for name in stack.wait_healthy(entries, timeout, "/readyz"):
        typer.secho(f"warning: {name} is up but not ready yet", fg="yellow", err=True)


def up(services: list[str] | None, assignments: list[str], detach: bool, timeout: float) -> None:
    started = _start(services, assignments, timeout)
    typer.echo(f"stack is up (logs in {logs_dir()})")
    if detach:
        return
    stopping = False

    def _stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    # Explicit handlers: a shell may start us with SIGINT ignored (background jobs).
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    typer.echo("Ctrl-C stops the services this command started.")
    while not stopping:
        time.sleep(0.2)
    down(started)


def down(services: list[str] | None) -> None:
    try:
        entries = stack.select(services)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    for entry in reversed(entries):
        if stack.stop_service(entry.name):
            typer.echo(f"stopped {entry.name}")


def status() -> None:
    typer.echo(f"{'service':<13} {'pid':<8} {'alive':<6} {'healthy':<8} {'ready':<6} url")
    for entry in stack.select(None):
        s = stack.state(entry)
        typer.echo(
            f"{entry.name:<13} {s.pid or '-'!s:<8} {_yes(s.alive):<6} {_yes(s.healthy):<8} "
            f"{_yes(s.ready):<6} {s.url}"
        )


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def logs(service: str, lines: int, follow: bool) -> None:
    path = logs_dir() / f"{service}.log"
    if not path.exists():
        raise _fail(f"no log for '{service}' at {path}")
    typer.echo(stack.log_tail(service, lines))
    if not follow:
        return
    with open(path, errors="replace") as handle:
        handle.seek(0, os.SEEK_END)
        try:
            while True:
                line = handle.readline()
                if line:
                    typer.echo(line, nl=False)
                else:
                    time.sleep(0.3)
        except KeyboardInterrupt:
            return


def load_spec(path: Path) -> JobSpec:
    if not path.exists():
        raise _fail(f"no such job spec: {path}")
    try:
        return load_job_spec(path)
    except JobSpecError as exc:
        raise _fail(str(exc), code=2) from None


def validate(path: Path) -> None:
    spec = load_spec(path)
    typer.echo(f"{path}: valid job spec '{spec.name}'")


def _api():  # type: ignore[no-untyped-def]
    from services.cli.follow import api_client

    return api_client()


def submit(path: Path) -> None:
    spec = load_spec(path)
    with _api() as client:
        job = client.submit(spec)
    typer.echo(job.id)


def jobs() -> None:
    with _api() as client:
        items = client.list_jobs()
    typer.echo(f"{'id':<34} {'status':<10} {'name':<24} created")
    for job in items:
        created = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(job.created_at))
        typer.echo(f"{job.id:<34} {job.status:<10} {job.name:<24} {created}")


def cancel(job_id: str) -> None:
    with _api() as client:
        job = client.cancel(job_id)
    typer.echo(f"{job.id}: {job.status}")


def run(path: Path, out: Path | None, keep_up: bool, assignments: list[str]) -> None:
    from services.cli.follow import follow_job, stack_settings_for

    spec = load_spec(path)
    models_prepare(spec.model.name, force=False, quiet=True)
    started = _start(None, stack_settings_for(spec) + assignments, timeout=600.0)
    try:
        with _api() as client:
            job = client.submit(spec)
            typer.echo(f"submitted job {job.id} ({spec.name})")
            code = follow_job(client, job.id, spec, out)
    finally:
        if started and not keep_up:
            down(started)
    raise typer.Exit(code)


def models_prepare(name: str, force: bool, quiet: bool = False) -> None:
    from services.inference.models import known_models, prepare_model

    if name not in known_models():
        if Path(name).exists() or quiet:
            return
        raise _fail(f"unknown model '{name}' (known: {', '.join(known_models())})")
    started = time.monotonic()
    path = prepare_model(name, force=force)
    if not quiet:
        typer.echo(f"{name}: {path} ({time.monotonic() - started:.1f} s)")


def tokens_create(name: str, scope: str) -> None:
    from services.api.settings import ApiSettings
    from services.api.tokens import create_token

    settings = ApiSettings()
    typer.echo(create_token(settings.resolved_database_url(), name, scope))


def home() -> Path:
    return slipstream_home()
