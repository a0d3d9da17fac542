import threading

import pytest

from ratelimit import ManualClock, TokenBucket


def make(rate=2.0, capacity=10):
    clock = ManualClock()
    return TokenBucket(rate=rate, capacity=capacity, clock=clock), clock


def test_starts_full_and_allows_a_burst_up_to_capacity():
    bucket, _ = make()
    assert all(bucket.try_acquire() for _ in range(10))
    assert not bucket.try_acquire()


def test_refills_at_rate():
    bucket, clock = make(rate=2.0)
    for _ in range(10):
        bucket.try_acquire()
    clock.advance(1.5)
    assert bucket.available() == pytest.approx(3.0)
    assert bucket.try_acquire(3)
    assert not bucket.try_acquire()


def test_never_exceeds_capacity():
    bucket, clock = make()
    clock.advance(3600)
    assert bucket.available() == 10


def test_time_until():
    bucket, clock = make(rate=4.0)
    assert bucket.time_until(10) == 0
    bucket.try_acquire(10)
    assert bucket.time_until(2) == pytest.approx(0.5)
    clock.advance(0.5)
    assert bucket.time_until(2) == 0


def test_rejects_impossible_requests():
    bucket, _ = make()
    with pytest.raises(ValueError):
        bucket.try_acquire(0)
    with pytest.raises(ValueError):
        bucket.try_acquire(11)
    with pytest.raises(ValueError):
        bucket.acquire(11, timeout=1)


def test_acquire_waits_for_tokens():
    bucket, clock = make(rate=2.0)
    bucket.try_acquire(10)
    assert bucket.acquire(3)
    assert clock.now() == pytest.approx(1.5)


def test_acquire_gives_up_at_the_timeout():
    bucket, clock = make(rate=1.0)
    bucket.try_acquire(10)
    assert not bucket.acquire(timeout=0)
    assert clock.now() == 0


def test_is_thread_safe():
    bucket, _ = make(rate=1.0, capacity=100)
    granted = []

    def worker():
        granted.append(sum(bucket.try_acquire() for _ in range(50)))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(granted) == 100
