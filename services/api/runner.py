"""The job runner: takes queued jobs, starts their processes, watches them to the end.

Lifecycle: queued -> starting -> running -> completed | failed | cancelled.

- Start: write `run_dir/runtime.json` (learner) and `run_dir/runtime-worker-{i}.json`
  (one per rollout worker, with `worker_index`), both `services.common.jobspec.JobRuntime`;
  start the learner and the workers (commands from settings), each in its own process
  group, logging to `run_dir/logs/{learner,worker-i}.log`. Each process gets
  `SLIPSTREAM_JOB_ID`, `SLIPSTREAM_API_URL`, `SLIPSTREAM_RUN_DIR` and a per-job token in
  `SLIPSTREAM_API_TOKEN` (scope `job`: post metrics for this job only; revoked at the end).
- Completion: the learner exiting 0 completes the job (the workers then get SIGTERM, and
  SIGKILL after `stop_grace_s`). Any process exiting non-zero fails it, with the exit
  status and the last log lines as the reason. A worker that exits 0 early is logged.
- Cancel: every process group gets SIGTERM, then SIGKILL; the job is recorded cancelled
  once no process of it is left.
- Restart policy: job processes are not re-adopted (a new API process cannot reap them or
  learn their exit status). On start, jobs left `starting`/`running` are marked failed
  ("api restarted while running") and any process still carrying their job id is
  stopped. A clean API shutdown stops running jobs the same way ("api stopped while
  running"). Resubmitting the spec starts the job again.

The runner runs in one background thread; `cancel` may be called from request threads
(a lock serialises it with the loop).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from services.api import procs
from services.api.launch import (
    Launcher,
    LaunchRequest,
    ProcessHandle,
    make_launcher,
    stop_handles,
)
from services.api.schemas import JobInfo, JobStatus
from services.api.settings import ApiSettings
from services.api.store import JobStore
from services.api.tokens import Scope, add_token, revoke_token
from services.common.jobspec import JobRuntime

log = logging.getLogger(__name__)

ACTIVE = (JobStatus.STARTING, JobStatus.RUNNING)
RESTARTED = "api restarted while running; its processes were stopped (resubmit to rerun)"
CANCELLED = "cancelled by request"
Role = Literal["learner", "worker"]
STOPPED = "api stopped while running; its processes were stopped (resubmit to rerun)"


@dataclass
class ActiveJob:
    job_id: str
    handles: list[ProcessHandle]
    token_id: int | None
    run_dir: Path

    @property
    def learner(self) -> ProcessHandle:
        return self.handles[0]


class JobRunner:
    def __init__(
        self, store: JobStore, settings: ApiSettings, launcher: Launcher | None = None
    ) -> None:
        self.store = store
        self.settings = settings
        self.config = settings.runner
        self.launcher = launcher
        self.active: dict[str, ActiveJob] = {}
        self.lock = threading.RLock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------- lifecycle

    def start(self) -> None:
        if self.launcher is None:
            self.launcher = make_launcher(self.config)
        self.recover()
        self._thread = threading.Thread(target=self._loop, name="job-runner", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the loop and every running job (recorded failed: api stopped)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        with self.lock:
            for job in list(self.active.values()):
                self._finish(job, JobStatus.FAILED, STOPPED, stop=True)
        if self.launcher is not None:
            self.launcher.close()

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wake(self) -> None:
        """Look at the queue now (a job was just submitted)."""
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                with self.lock:
                    self.tick()
            except Exception:  # the runner must outlive one bad tick (e.g. db blip)
                log.exception("job runner tick failed")
            self._wake.wait(self.config.poll_interval_s)
            self._wake.clear()

    def tick(self) -> None:
        for job in list(self.active.values()):
            self._check(job)
        free = self.config.max_running_jobs - len(self.active)
        if free > 0:
            for info in self.store.jobs_in([JobStatus.QUEUED], limit=free):
                self._start_job(info)

    # ---------------------------------------------------------------- recover

    def recover(self) -> None:
        """Fail jobs a previous API process left active and stop their processes."""
        for info in self.store.jobs_in(ACTIVE):
            self._kill_leftovers(info)
            if self.store.transition(info.id, ACTIVE, JobStatus.FAILED, reason=RESTARTED):
                log.warning("job %s: %s", info.id, RESTARTED)
            self._revoke_job_tokens(info)

    def _kill_leftovers(self, info: JobInfo) -> None:
        groups = {procs.process_group(pid) for pid in procs.job_pids(info.id)}
        for process in info.processes:
            # The recorded leader still running as the same process (not a recycled pid).
            if process.pid and process.start_time == procs.start_time(process.pid):
                groups.add(process.pid)
        groups -= {None, os.getpgrp()}  # never signal our own group
        live = [g for g in groups if g is not None and procs.group_alive(g)]
        for pgid in live:
            procs.signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + self.config.stop_grace_s
        while time.monotonic() < deadline and any(procs.group_alive(g) for g in live):
            time.sleep(0.05)
        for pgid in live:
            procs.signal_group(pgid, signal.SIGKILL)

    def _revoke_job_tokens(self, info: JobInfo) -> None:
        from services.api.tokens import list_tokens

        for token in list_tokens(self.store.db):
            if token.job_id == info.id and token.revoked_at is None:
                revoke_token(self.store.db, token.id)

    # ------------------------------------------------------------------ start

    def _start_job(self, info: JobInfo) -> None:
        if not self.store.transition(info.id, [JobStatus.QUEUED], JobStatus.STARTING):
            return
        run_dir = self.settings.runs_dir() / info.id
        token_id, token = add_token(self.store.db, f"job-{info.id}", Scope.JOB, job_id=info.id)
        job = ActiveJob(info.id, [], token_id, run_dir)
        self.active[info.id] = job
        try:
            for request in self._requests(info, run_dir, token):
                assert self.launcher is not None
                job.handles.append(self.launcher.launch(request))
                log.info("job %s: started %s", info.id, request.label)
        except Exception as exc:
            log.exception("job %s: could not start its processes", info.id)
            self._finish(job, JobStatus.FAILED, f"could not start the job: {exc}", stop=True)
            return
        self.store.set_processes(info.id, [h.info for h in job.handles], str(run_dir))
        self.store.transition(info.id, [JobStatus.STARTING], JobStatus.RUNNING)

    def _requests(self, info: JobInfo, run_dir: Path, token: str) -> list[LaunchRequest]:
        endpoints = self.settings.job_endpoints()
        env = {
            **self.config.extra_env,
            procs.JOB_ID_ENV: info.id,
            "SLIPSTREAM_API_URL": endpoints.api or "",
            "SLIPSTREAM_API_TOKEN": token,
            "SLIPSTREAM_RUN_DIR": str(run_dir),
            "PYTHONUNBUFFERED": "1",
        }
        roles: list[tuple[Role, int]] = [("learner", 0)]
        roles += [("worker", i) for i in range(info.spec.resources.rollout_workers)]
        return [self._request(info, run_dir, env, role, index) for role, index in roles]

    def _request(
        self, info: JobInfo, run_dir: Path, env: dict[str, str], role: Role, index: int
    ) -> LaunchRequest:
        stem = "learner" if role == "learner" else f"worker-{index}"
        name = "runtime.json" if role == "learner" else f"runtime-{stem}.json"
        runtime = JobRuntime(
            job_id=info.id,
            spec=info.spec,
            endpoints=self.settings.job_endpoints(),
            run_dir=str(run_dir),
            worker_index=index,
        )
        template = self.config.learner_command if role == "learner" else self.config.worker_command
        values = {
            "python": sys.executable,
            "runtime": str(run_dir / name),
            "job_id": info.id,
            "run_dir": str(run_dir),
            "worker_index": str(index),
        }
        return LaunchRequest(
            role=role,
            index=index,
            argv=[part.format(**values) for part in template],
            env=env,
            log_path=run_dir / "logs" / f"{stem}.log",
            runtime_path=run_dir / name,
            runtime_json=runtime.model_dump_json(indent=2),
        )

    # ------------------------------------------------------------------ watch

    def _check(self, job: ActiveJob) -> None:
        self._forward_logs(job)
        codes = [h.poll() for h in job.handles]
        learner_code = codes[0]
        failed = next(
            (h for h, c in zip(job.handles, codes, strict=True) if c not in (None, 0)), None
        )
        if failed is not None:
            self._finish(job, JobStatus.FAILED, self._failure_reason(failed), stop=True)
        elif learner_code == 0:
            self._finish(job, JobStatus.COMPLETED, None, stop=True)

    def _forward_logs(self, job: ActiveJob) -> None:
        limit = self.config.forward_log_lines
        if limit <= 0:
            return
        for handle in job.handles:
            lines = handle.new_lines(limit)
            if lines:
                self.store.add_log_event(job.job_id, handle.label, lines)

    def _failure_reason(self, handle: ProcessHandle) -> str:
        code = handle.info.returncode
        head = f"{handle.label} {procs.describe_exit(code if code is not None else -9)}"
        lines = handle.tail(self.config.log_tail_lines)
        if not lines:
            return f"{head} (its log is empty)"
        return f"{head}; last lines of its log:\n" + "\n".join(lines)

    def _finish(self, job: ActiveJob, status: JobStatus, reason: str | None, *, stop: bool) -> bool:
        if stop:
            stop_handles(job.handles, self.config.stop_grace_s)
            self._forward_logs(job)
        if job.handles:
            self.store.set_processes(job.job_id, [h.info for h in job.handles], str(job.run_dir))
        if job.token_id is not None:
            revoke_token(self.store.db, job.token_id)
        self.active.pop(job.job_id, None)
        done = self.store.transition(job.job_id, ACTIVE, status, reason=reason)
        log.info(
            "job %s: %s%s", job.job_id, status, f" ({reason.splitlines()[0]})" if reason else ""
        )
        return done

    # ----------------------------------------------------------------- cancel

    def cancel(self, job_id: str) -> JobInfo:
        """Cancel a job: queued ones at once, running ones once every process is gone."""
        self.store.request_cancel(job_id)
        with self.lock:
            if self.store.transition(
                job_id, [JobStatus.QUEUED], JobStatus.CANCELLED, reason=CANCELLED
            ):
                return self.store.get_job(job_id)
            job = self.active.get(job_id)
            if job is not None:
                self._finish(job, JobStatus.CANCELLED, CANCELLED, stop=True)
            else:
                # Active in the store but not supervised here (e.g. this process runs
                # no runner): stop whatever of it runs on this machine and record it.
                info = self.store.get_job(job_id)
                if info.status in ACTIVE:
                    self._kill_leftovers(info)
                    self.store.transition(job_id, ACTIVE, JobStatus.CANCELLED, reason=CANCELLED)
        return self.store.get_job(job_id)
