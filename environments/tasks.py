"""Tasks and task sets: seeded, versioned collections with train/eval splits.

A `Task` holds what the agent sees (`prompt`, visible `metadata`) and what only verifiers
see (`answer`, `aliases`, `gold_sql`, `db_id`, `gold`). `Task.view()` is the agent-safe
`TaskView`. Task sets are built by each environment (`Environment.build_task_set`) and
cached as JSONL under the data dir, keyed by name and version, so the reward service can
load them without starting a server (`environments.registry.get_task`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from services.common.paths import slipstream_home
from services.common.wire import TaskView

log = logging.getLogger(__name__)

Split = Literal["train", "eval"]


def default_data_dir() -> Path:
    """`$SLIPSTREAM_HOME/data` (default `~/.slipstream/data`)."""
    return slipstream_home() / "data"


class Task(BaseModel):
    """One task. Gold fields never leave the process through `view()`."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="Stable id, unique within its task set.")
    task_type: str = Field(description="Verifier key: 'arithmetic', 'exact_match', 'sql', ...")
    prompt: str = Field(description="The question or instruction shown to the agent.")
    split: Split = Field("train", description="'train' or 'eval'.")
    difficulty: str | None = Field(None, description="e.g. 'easy', 'medium', 'hard'.")
    answer: str | None = Field(None, description="Gold answer (exact match / F1 / numeric).")
    aliases: list[str] = Field(default_factory=list, description="Other accepted answers.")
    gold_sql: str | None = Field(None, description="Gold query (sql tasks).")
    db_id: str | None = Field(None, description="Database the task runs against (sql tasks).")
    gold: dict[str, Any] = Field(
        default_factory=dict, description="Other verifier-only data (tests, evidence ids)."
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Agent-visible extras, copied into the TaskView."
    )

    def view(self) -> TaskView:
        return TaskView(
            task_id=self.task_id,
            task_type=self.task_type,
            prompt=self.prompt,
            difficulty=self.difficulty,
            metadata=dict(self.metadata),
        )

    @property
    def answers(self) -> list[str]:
        """The gold answer followed by its aliases."""
        return ([self.answer] if self.answer is not None else []) + list(self.aliases)


def split_for(task_id: str, eval_fraction: float, salt: str = "") -> Split:
    """A stable train/eval assignment from a hash of the id (independent of order)."""
    digest = hashlib.sha256(f"{salt}:{task_id}".encode()).digest()
    return "eval" if int.from_bytes(digest[:8], "big") / 2**64 < eval_fraction else "train"


class TaskSet:
    """An immutable, versioned collection of tasks with train/eval splits."""

    def __init__(self, env: str, name: str, version: str, seed: int, tasks: Iterable[Task]) -> None:
        self.env = env
        self.name = name
        self.version = version
        self.seed = seed
        self.tasks: list[Task] = list(tasks)
        self._by_id = {t.task_id: t for t in self.tasks}
        if len(self._by_id) != len(self.tasks):
            raise ValueError(f"task set {env}/{name}: duplicate task ids")
        self._splits: dict[str, list[Task]] = {"train": [], "eval": []}
        for task in self.tasks:
            self._splits[task.split].append(task)

    def __len__(self) -> int:
        return len(self.tasks)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._by_id

    def get(self, task_id: str) -> Task:
        try:
            return self._by_id[task_id]
        except KeyError:
            raise KeyError(f"task '{task_id}' is not in {self.env}/{self.name}") from None

    def split(self, split: Split) -> list[Task]:
        return self._splits[split]

    def sizes(self) -> dict[str, int]:
        return {name: len(tasks) for name, tasks in self._splits.items()}

    def sample(self, split: Split = "train", seed: int | None = None) -> Task:
        pool = self._splits[split]
        if not pool:
            raise KeyError(f"task set {self.env}/{self.name} has no '{split}' tasks")
        rng = random.Random(seed) if seed is not None else random.Random()
        return pool[rng.randrange(len(pool))]

    def fingerprint(self) -> str:
        """A hash of the content: equal fingerprints mean identical tasks and gold."""
        h = hashlib.sha256()
        for task in self.tasks:
            h.update(task.model_dump_json().encode())
        return h.hexdigest()[:16]

    # ---------------------------------------------------------------- persistence

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + f".tmp{os.getpid()}")
        header = {"env": self.env, "name": self.name, "version": self.version, "seed": self.seed}
        with tmp.open("w") as f:
            f.write(json.dumps({"task_set": header}) + "\n")
            for task in self.tasks:
                f.write(task.model_dump_json(exclude_defaults=True) + "\n")
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> TaskSet:
        with path.open() as f:
            header = json.loads(f.readline())["task_set"]
            tasks = [Task.model_validate_json(line) for line in f if line.strip()]
        return cls(header["env"], header["name"], header["version"], header["seed"], tasks)

    def __repr__(self) -> str:
        return (
            f"TaskSet({self.env}/{self.name} v{self.version} seed={self.seed} "
            f"train={len(self._splits['train'])} eval={len(self._splits['eval'])})"
        )


def cache_path(data_dir: Path, env: str, name: str, version: str, seed: int) -> Path:
    return data_dir / "tasks" / env / f"{name}-v{version}-s{seed}.jsonl"
