"""`slipstream`: run the local stack, submit and follow jobs, prepare models.

Imports stay light at module level (typer only) so `slipstream --help` is instant; each
command imports what it needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    name="slipstream",
    help="Slipstream: asynchronous agentic RL. Start the stack, submit jobs, follow them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
models_app = typer.Typer(help="Prepare models into the local cache.", no_args_is_help=True)
tokens_app = typer.Typer(help="Manage API tokens.", no_args_is_help=True)
app.add_typer(models_app, name="models")
app.add_typer(tokens_app, name="tokens")

ServicesOpt = Annotated[
    list[str] | None, typer.Option("--service", "-s", help="Only these services (repeatable).")
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="Service setting as SERVICE.FIELD=VALUE, e.g. inference.engine__type=hf "
        "(becomes env SLIPSTREAM_INFERENCE_ENGINE__TYPE).",
    ),
]


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code)


@app.command()
def up(
    services: ServicesOpt = None,
    set_: SetOpt = None,
    detach: Annotated[
        bool, typer.Option("--detach", "-d", help="Return once healthy; `down` stops them.")
    ] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for health.")] = 180.0,
) -> None:
    """Start every service as a local process on 127.0.0.1 and wait until healthy.

    In the foreground (default) Ctrl-C stops them all."""
    from services.cli import commands

    commands.up(services, set_ or [], detach, timeout)


@app.command()
def down(services: ServicesOpt = None) -> None:
    """Stop services started by `up` (whole process groups; nothing is left behind)."""
    from services.cli import commands

    commands.down(services)


@app.command()
def status() -> None:
    """Show each service: pid, alive, healthy, ready."""
    from services.cli import commands

    commands.status()


@app.command()
def logs(
    service: Annotated[str, typer.Argument(help="Service name, e.g. inference.")],
    lines: Annotated[int, typer.Option("-n", help="Lines to show.")] = 50,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing.")] = False,
) -> None:
    """Print a service's log file."""
    from services.cli import commands

    commands.logs(service, lines, follow)


@app.command()
def validate(spec: Annotated[Path, typer.Argument(help="Job spec YAML/JSON.")]) -> None:
    """Check a job spec without submitting it."""
    from services.cli import commands

    commands.validate(spec)


@app.command()
def submit(spec: Annotated[Path, typer.Argument(help="Job spec YAML/JSON.")]) -> None:
    """Submit a job spec to the control plane; prints the job id."""
    from services.cli import commands

    commands.submit(spec)


@app.command()
def jobs() -> None:
    """List jobs."""
    from services.cli import commands

    commands.jobs()


@app.command()
def cancel(job_id: Annotated[str, typer.Argument(help="Job id.")]) -> None:
    """Cancel a job (its processes are stopped)."""
    from services.cli import commands

    commands.cancel(job_id)


@app.command()
def run(
    spec: Annotated[Path, typer.Argument(help="Job spec YAML/JSON.")],
    out: Annotated[
        Path | None, typer.Option(help="Where to write the reward curve (default: run dir).")
    ] = None,
    keep_up: Annotated[
        bool, typer.Option(help="Leave the stack running afterwards if `run` started it.")
    ] = False,
    set_: SetOpt = None,
) -> None:
    """Start the stack if needed, submit SPEC and follow it with a live progress bar.

    Exits non-zero if the job fails or is cancelled."""
    from services.cli import commands

    commands.run(spec, out, keep_up, set_ or [])


@models_app.command("prepare")
def models_prepare(
    name: Annotated[str, typer.Argument(help="smollm2-135m-instruct | tiny-random")],
    force: Annotated[bool, typer.Option(help="Rebuild even if cached.")] = False,
) -> None:
    """Build a model folder (safetensors + tokenizer) in the local cache, once."""
    from services.cli import commands

    commands.models_prepare(name, force)


@tokens_app.command("create")
def tokens_create(
    name: Annotated[str, typer.Argument(help="A label for the token.")],
    scope: Annotated[str, typer.Option(help="admin | read | write")] = "admin",
) -> None:
    """Create an API token; prints it once (only its hash is stored)."""
    from services.cli import commands

    commands.tokens_create(name, scope)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
