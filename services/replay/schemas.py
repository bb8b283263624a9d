"""Request/response models of the replay service's HTTP API (the façade over the store)."""

from __future__ import annotations

from pydantic import Field, NonNegativeInt

from services.common.wire import PolicyVersion, Trajectory, WireModel


class TakeRequest(WireModel):
    """Ask for the next batch of complete groups for the learner at `version`."""

    version: PolicyVersion = Field(description="The learner's current policy version.")
    max_staleness: NonNegativeInt = Field(description="Drop samples older than v - this.")
    num_groups: int = Field(ge=1, description="Complete groups wanted in the batch.")
    wait_s: float = Field(0.0, ge=0, le=300, description="Block up to this long for data.")


class Batch(WireModel):
    """A batch handed to the learner. It stays pending (and is redelivered after a crash)
    until acknowledged with `ack`."""

    batch_id: str
    job_id: str
    version: PolicyVersion = Field(description="Learner version the batch was taken at.")
    trajectories: list[Trajectory] = Field(description="Whole groups, group by group.")
    dropped_stale: NonNegativeInt = Field(0, description="Samples dropped as too old.")
    redelivered: bool = Field(False, description="True if handed out before and not acked.")


class AdmitRequest(WireModel):
    """AReaL's admission rule: start episodes only while
    started <= (version + max_staleness + 1) * batch_size."""

    version: PolicyVersion
    max_staleness: NonNegativeInt
    batch_size: int = Field(ge=1)
    count: int = Field(1, ge=1, description="Episodes the caller wants to start.")


class AdmitResponse(WireModel):
    admitted: NonNegativeInt = Field(description="How many of `count` may start now.")
    started: NonNegativeInt = Field(description="Episodes started for the job so far.")
    finished: bool = Field(False, description="The job is finished: start nothing more.")


class ReleaseRequest(WireModel):
    """Give admission slots back for episodes that were admitted but will never be pushed
    (a worker stopping mid-group)."""

    count: int = Field(ge=1, description="Admitted episodes that will never arrive.")


class AckResponse(WireModel):
    acked: bool = Field(description="False if the batch was unknown (already acked, or "
                        "redelivered after its visibility timeout).")


class RecoverResponse(WireModel):
    requeued_batches: NonNegativeInt = Field(description="Pending batches put back.")


class FinishRequest(WireModel):
    reason: str = Field("finished", description="Why the job ended (shown to workers).")


class ReplayStats(WireModel):
    job_id: str
    depth: NonNegativeInt = Field(description="Trajectories waiting, not yet taken.")
    pending_batches: NonNegativeInt = Field(description="Taken but not acknowledged.")
    complete_groups: NonNegativeInt
    consumed: NonNegativeInt
    dropped_stale: NonNegativeInt
    started: NonNegativeInt
    version: PolicyVersion = Field(description="Latest published policy version.")
    age_histogram: dict[str, int] = Field(
        default_factory=dict, description="Waiting samples by version gap (str keys)."
    )
    incomplete_groups: NonNegativeInt = Field(0, description="Groups still missing members.")
    pending_samples: NonNegativeInt = Field(0, description="Samples in unacked batches.")
    redelivered_batches: NonNegativeInt = Field(
        0, description="Batches put back after a timeout or a learner recover."
    )
    archived: NonNegativeInt = Field(0, description="Trajectories kept for browsing.")
    finished: bool = Field(False, description="The job was marked finished.")
    finish_reason: str | None = Field(None, description="Why, when finished.")


class TrajectoryPage(WireModel):
    items: list[Trajectory]
    total: NonNegativeInt
    offset: NonNegativeInt
