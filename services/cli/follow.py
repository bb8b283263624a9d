"""Following a job from the CLI: the API client, the live progress bar, the final curve."""

from __future__ import annotations

import os
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from services.api.client import ApiClient
from services.api.schemas import JobInfo, JobStatus
from services.cli.curve import write_reward_curve
from services.common.jobspec import JobSpec
from services.common.paths import slipstream_home
from services.common.topology import by_name
from services.common.wire import MetricPoint

POLL_S = 2.0


def api_client() -> ApiClient:
    """The control plane at `$SLIPSTREAM_API_URL` (default: the local stack), with the token
    from `$SLIPSTREAM_API_TOKEN` or the bootstrap file the local api wrote on first start."""
    return ApiClient(os.environ.get("SLIPSTREAM_API_URL", by_name("api").url))


def stack_settings_for(spec: JobSpec) -> list[str]:
    """Service settings (`--set` form) that make the local stack serve this job's model."""
    from services.inference.models import resolve_model

    return [
        f"inference.model={resolve_model(spec.model.name)}",
        f"inference.engine__type={spec.model.engine}",
        f"inference.engine__dtype={spec.model.dtype}",
        f"inference.engine__max_model_len={spec.model.max_model_len}",
    ]


def _describe(job: JobInfo, latest: dict[str, float], eval_reward: float | None) -> str:
    parts = [f"[bold]{job.status}[/]"]
    for key, label, fmt in (
        ("reward/mean", "reward", "{:.3f}"),
        ("tokens_per_s", "tok/s", "{:.0f}"),
        ("staleness/mean", "staleness", "{:.2f}"),
    ):
        if key in latest:
            parts.append(f"{label} {fmt.format(latest[key])}")
    if eval_reward is not None:
        parts.append(f"eval {eval_reward:.3f}")
    return "  ".join(parts)


def follow_job(client: ApiClient, job_id: str, spec: JobSpec, out: Path | None) -> int:
    """Show progress until the job ends; write the reward curve. Returns the exit code."""
    console = Console()
    points: list[MetricPoint] = []
    eval_reward: float | None = None
    columns = (
        TextColumn("step"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        bar = progress.add_task("queued", total=spec.budget.max_steps)
        while True:
            job = client.get_job(job_id)
            points = client.metrics(job_id).points
            train = [p for p in points if p.kind == "train"]
            evals = [p for p in points if p.kind == "eval" and "eval_reward" in p.values]
            if evals:
                eval_reward = evals[-1].values["eval_reward"]
            latest = train[-1].values if train else {}
            step = train[-1].step if train else 0
            progress.update(bar, completed=step, description=_describe(job, latest, eval_reward))
            if job.status.terminal:
                break
            time.sleep(POLL_S)
    return _finish(console, job, points, out)


def _finish(console: Console, job: JobInfo, points: list[MetricPoint], out: Path | None) -> int:
    run_dir = Path(job.run_dir) if job.run_dir else slipstream_home() / "runs" / job.id
    csv_path, png_path = write_reward_curve(points, out or run_dir)
    console.print(f"reward curve: {csv_path}" + (f" and {png_path}" if png_path else ""))
    evals = [p.values["eval_reward"] for p in points
             if p.kind == "eval" and "eval_reward" in p.values]
    if len(evals) >= 2:
        console.print(f"held-out eval reward: {evals[0]:.3f} -> {evals[-1]:.3f}")
    final = run_dir / "final"
    if final.exists():
        console.print(f"final checkpoint: {final}")
    if job.status == JobStatus.COMPLETED:
        console.print(f"[green]job {job.id} completed[/]")
        return 0
    reason = job.failure_reason or "no reason recorded"
    typer.secho(f"error: job {job.id} {job.status}: {reason}", fg=typer.colors.RED, err=True)
    return 1
