"""The reward curve a finished job leaves behind: CSV for tools, PNG for people."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path

from services.common.wire import MetricPoint

TRAIN_KEY = "reward/mean"  # the learner's batch mean reward
EVAL_KEY = "eval_reward"


def write_reward_curve(points: Iterable[MetricPoint], out_dir: Path) -> tuple[Path, Path | None]:
    """Write `reward_curve.csv` (step, kind, reward) and, when matplotlib is present,
    `reward_curve.png`. Returns both paths (PNG None when it could not be drawn)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = _rows(points)
    csv_path = out_dir / "reward_curve.csv"
    with open(csv_path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["step", "kind", "reward"])
        writer.writerows(rows)
    return csv_path, _plot(rows, out_dir / "reward_curve.png")


def _rows(points: Iterable[MetricPoint]) -> list[tuple[int, str, float]]:
    rows = []
    for point in points:
        key = EVAL_KEY if point.kind == "eval" else TRAIN_KEY
        if point.kind in ("train", "eval") and key in point.values:
            rows.append((point.step, point.kind, point.values[key]))
    return sorted(rows)


def _plot(rows: list[tuple[int, str, float]], path: Path) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(7, 4), dpi=120)
    for kind, style, label in (("train", "-", "train reward (batch mean)"),
                               ("eval", "o-", "held-out eval reward")):
        series = [(step, value) for step, k, value in rows if k == kind]
        if series:
            ax.plot(*zip(*series, strict=True), style, label=label)
    ax.set_xlabel("learner step")
    ax.set_ylabel("reward")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
