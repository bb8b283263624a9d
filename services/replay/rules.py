"""The staleness rules, as pure functions shared by every backend.

- Admission (AReaL's rule): at learner version v an episode may start only while
  `started <= (v + max_staleness + 1) * batch_size` counting that episode itself.
- Staleness filter: the learner at version v never consumes a sample whose oldest token
  came from a policy older than `v - max_staleness`. A group with any stale member is
  dropped whole (GRPO-style advantages need the full group), and every member counts as
  dropped. Dropped samples give their admission slots back, so a worker can start a
  replacement and `max_staleness = 0` never deadlocks on a straggler.
"""

from __future__ import annotations

from collections.abc import Iterable


def admission_capacity(version: int, max_staleness: int, batch_size: int) -> int:
    """How many episodes a job may have started (in total) at learner `version`."""
    return (version + max_staleness + 1) * batch_size


def admit_count(
    started: int, version: int, max_staleness: int, batch_size: int, count: int
) -> int:
    """How many of `count` new episodes may start now."""
    room = admission_capacity(version, max_staleness, batch_size) - started
    return max(0, min(count, room))


def min_fresh_version(version: int, max_staleness: int) -> int:
    """The oldest policy version a sample consumed at `version` may carry."""
    return version - max_staleness


def is_stale(oldest_version: int, version: int, max_staleness: int) -> bool:
    return oldest_version < min_fresh_version(version, max_staleness)


def group_is_stale(oldest_versions: Iterable[int], version: int, max_staleness: int) -> bool:
    return any(is_stale(v, version, max_staleness) for v in oldest_versions)


def age_histogram(oldest_versions: dict[int, int], latest_version: int) -> dict[str, int]:
    """Waiting samples by version gap (latest published version - oldest token version)."""
    out: dict[str, int] = {}
    for oldest, count in oldest_versions.items():
        if count <= 0:
            continue
        gap = str(max(0, latest_version - oldest))
        out[gap] = out.get(gap, 0) + count
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))
