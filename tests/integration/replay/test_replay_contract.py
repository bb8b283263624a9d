"""The replay store contract, run against every backend: memory, Redis, and the HTTP
façade over each (the same method names everywhere)."""

from __future__ import annotations

import threading
import time

import pytest
from replay_fixtures import make_group, make_traj

from services.common.errors import Conflict, Overloaded
from services.common.wire import PolicyPublication


def test_round_trip_keeps_every_field(store, job_id: str) -> None:
    group = make_group(job_id, 2, version=3)
    group[0].turn_rewards = [0.5]
    group[0].metadata = {"k": "v"}
    store.put_many(group)
    batch = store.take_batch(job_id, 3, 0, 1)
    assert batch is not None
    assert [t.model_dump() for t in batch.trajectories] == [t.model_dump() for t in group]
    assert batch.version == 3 and batch.job_id == job_id and not batch.redelivered


def test_only_complete_groups_fifo_by_completion(store, job_id: str) -> None:
    first, second = make_group(job_id, 2), make_group(job_id, 2)
    store.put(first[0])
    store.put_many(second)  # completes first
    store.put(first[1])
    assert store.take_batch(job_id, 0, 0, 3) is None  # only two complete groups
    batch = store.take_batch(job_id, 0, 0, 1)
    assert [t.group_id for t in batch.trajectories] == [second[0].group_id] * 2
    batch2 = store.take_batch(job_id, version=0, max_staleness=0, num_groups=1)
    assert [t.sample_index for t in batch2.trajectories] == [0, 1]
    assert batch2.trajectories[0].group_id == first[0].group_id


def test_not_enough_groups_takes_nothing(store, job_id: str) -> None:
    store.put_many(make_group(job_id, 2))
    store.put(make_group(job_id, 2)[0])  # incomplete
    assert store.take_batch(job_id, 0, 0, 2) is None
    stats = store.stats(job_id)
    assert (stats.depth, stats.complete_groups, stats.incomplete_groups) == (3, 1, 1)
    assert stats.pending_batches == 0


def test_stale_groups_dropped_whole_and_counted(store, job_id: str) -> None:
    assert store.admit(job_id, 0, 10, 2, count=6).admitted == 6
    stale = make_group(job_id, 2, versions=[3, 1])  # one member too old at v=4, s=2
    fresh = make_group(job_id, 2, versions=[2, 4])
    store.put_many(stale + fresh)
    batch = store.take_batch(job_id, 4, 2, 1)
    assert batch is not None
    assert {t.group_id for t in batch.trajectories} == {fresh[0].group_id}
    assert batch.dropped_stale == 2
    stats = store.stats(job_id)
    assert stats.dropped_stale == 2
    assert stats.started == 4  # the dropped samples gave their admission slots back
    for traj in batch.trajectories:
        assert batch.version - traj.oldest_version <= 2


def test_stale_groups_dropped_even_when_no_batch(store, job_id: str) -> None:
    store.put_many(make_group(job_id, 2, version=0))
    assert store.take_batch(job_id, 5, 1, 1) is None
    stats = store.stats(job_id)
    assert stats.dropped_stale == 2 and stats.depth == 0


def test_admission_rule(store, job_id: str) -> None:
    # cap = (v + s + 1) * B
    out = store.admit(job_id, 0, 1, 4, count=5)
    assert (out.admitted, out.started) == (5, 5)
    out = store.try_admit(job_id, 0, 1, 4, 5)
    assert (out.admitted, out.started) == (3, 8)
    assert store.admit(job_id, 0, 1, 4, count=1).admitted == 0
    assert store.admit(job_id, 1, 1, 4, count=10).admitted == 4
    assert store.release(job_id, 2).started == 10
    assert store.admit(job_id, 1, 1, 4, count=3).admitted == 2
    store.finish(job_id, "budget reached")
    out = store.admit(job_id, 9, 1, 4, count=3)
    assert out.finished and out.admitted == 0
    stats = store.stats(job_id)
    assert stats.finished and stats.finish_reason == "budget reached"


def test_admission_is_atomic_across_threads(store_factory, job_id: str) -> None:
    store = store_factory()
    admitted: list[int] = []

    def grab() -> None:
        for _ in range(20):
            admitted.append(store.admit(job_id, 0, 1, 10, count=1).admitted)

    threads = [threading.Thread(target=grab) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(admitted) == 20  # (0 + 1 + 1) * 10


def test_ack_is_final(store, job_id: str) -> None:
    store.put_many(make_group(job_id, 3))
    batch = store.take_batch(job_id, 0, 0, 1)
    assert store.stats(job_id).pending_samples == 3
    assert store.ack(job_id, batch.batch_id) is True
    assert store.ack(job_id, batch.batch_id) is False
    assert store.recover(job_id) == 0
    assert store.take_batch(job_id, 0, 0, 1) is None
    stats = store.stats(job_id)
    assert (stats.consumed, stats.pending_batches, stats.depth) == (3, 0, 0)


def test_recover_redelivers_unacked(store, job_id: str) -> None:
    g1, g2, g3 = (make_group(job_id, 2) for _ in range(3))
    store.put_many(g1 + g2 + g3)
    b1 = store.take_batch(job_id, 0, 0, 1)
    b2 = store.take_batch(job_id, 0, 0, 1)
    assert store.recover(job_id) == 2
    stats = store.stats(job_id)
    assert stats.redelivered_batches == 2 and stats.complete_groups == 3
    again = store.take_batch(job_id, 0, 0, 2)
    assert again.redelivered
    ids = [t.trajectory_id for t in again.trajectories]
    assert ids == [t.trajectory_id for t in b1.trajectories + b2.trajectories]
    assert store.ack(job_id, b1.batch_id) is False  # the old id is gone
    assert store.ack(job_id, again.batch_id)
    last = store.take_batch(job_id, 0, 0, 1)
    assert not last.redelivered and last.trajectories[0].group_id == g3[0].group_id


def test_visibility_timeout_redelivers(store_factory, job_id: str) -> None:
    store = store_factory(visibility_timeout_s=0.3)
    store.put_many(make_group(job_id, 2))
    first = store.take_batch(job_id, 0, 0, 1)
    assert store.take_batch(job_id, 0, 0, 1) is None
    again = store.take_batch(job_id, 0, 0, 1, wait_s=3.0)
    assert again is not None and again.redelivered
    assert [t.trajectory_id for t in again.trajectories] == [
        t.trajectory_id for t in first.trajectories
    ]


def test_redelivery_refilters_staleness(store, job_id: str) -> None:
    store.put_many(make_group(job_id, 2, version=0))
    assert store.take_batch(job_id, 0, 1, 1) is not None
    store.recover(job_id)
    assert store.take_batch(job_id, 3, 1, 1) is None
    assert store.stats(job_id).dropped_stale == 2


def test_blocking_take_wakes_on_put(store, job_id: str) -> None:
    group = make_group(job_id, 2)
    timer = threading.Timer(0.3, store.put_many, args=(group,))
    timer.start()
    start = time.monotonic()
    batch = store.take_batch(job_id, 0, 0, 1, wait_s=10.0)
    timer.join()
    assert batch is not None and time.monotonic() - start < 5.0
    assert store.take_batch(job_id, 0, 0, 1, wait_s=0.2) is None


def test_idempotent_put(store, job_id: str) -> None:
    group = make_group(job_id, 2)
    store.put(group[0])
    store.put(group[0])
    assert store.stats(job_id).depth == 1
    store.put_many(group)
    store.put(group[1])
    stats = store.stats(job_id)
    assert (stats.depth, stats.complete_groups) == (2, 1)


def test_age_histogram(store, job_id: str) -> None:
    store.put_many(make_group(job_id, 2, versions=[1, 3]))
    store.put(make_traj(job_id, "open", 0, 2, version=3))
    store.publish(PolicyPublication(job_id=job_id, version=4, checkpoint_path="/ckpt/4"))
    stats = store.stats(job_id)
    assert stats.version == 4
    assert stats.age_histogram == {"1": 2, "3": 1}


def test_bounded_length(store_factory, job_id: str) -> None:
    store = store_factory(max_len=3)
    store.put_many(make_group(job_id, 3))
    with pytest.raises(Overloaded):
        store.put(make_group(job_id, 1)[0])
    batch = store.take_batch(job_id, 0, 0, 1)
    store.ack(job_id, batch.batch_id)
    store.put(make_group(job_id, 1)[0])  # room again


def test_archive_is_bounded_newest_first(store_factory, job_id: str) -> None:
    store = store_factory(archive_max=3)
    group = make_group(job_id, 5)
    store.put_many(group)
    page = store.trajectories(job_id, offset=0, limit=2)
    assert page.total == 3 and page.offset == 0
    assert [t.sample_index for t in page.items] == [4, 3]
    page2 = store.archive(job_id, offset=2, limit=10)
    assert [t.sample_index for t in page2.items] == [2]


def test_publications(store, job_id: str) -> None:
    assert store.latest_publication(job_id) is None
    store.publish(PolicyPublication(job_id=job_id, version=1, checkpoint_path="/c/1"))
    store.publish(PolicyPublication(job_id=job_id, version=2, checkpoint_path="/c/2"))
    store.publish(PolicyPublication(job_id=job_id, version=2, checkpoint_path="/c/2b"))
    latest = store.latest_publication(job_id)
    assert (latest.version, latest.checkpoint_path) == (2, "/c/2b")
    with pytest.raises(Conflict):
        store.publish(PolicyPublication(job_id=job_id, version=1, checkpoint_path="/c/1"))


def test_jobs_are_isolated_and_deletable(store, job_id: str) -> None:
    other = job_id + "-other"
    store.put_many(make_group(job_id, 2))
    store.put_many(make_group(other, 2))
    store.admit(job_id, 0, 0, 2, count=2)
    store.publish(PolicyPublication(job_id=job_id, version=3, checkpoint_path="/c"))
    store.delete_job(job_id)
    stats = store.stats(job_id)
    assert (stats.depth, stats.started, stats.version, stats.archived) == (0, 0, 0, 0)
    assert store.latest_publication(job_id) is None
    assert store.stats(other).depth == 2
    assert store.take_batch(other, 0, 0, 1) is not None
    store.delete_job(other)
