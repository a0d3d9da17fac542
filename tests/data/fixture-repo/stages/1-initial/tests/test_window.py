from ratelimit import ManualClock, SlidingWindowLog


def test_allows_limit_events_per_window():
    clock = ManualClock()
    log = SlidingWindowLog(limit=3, window=10, clock=clock)
    assert [log.allow() for _ in range(4)] == [True, True, True, False]
    clock.advance(10)
    assert log.allow()


def test_window_slides():
    clock = ManualClock()
    log = SlidingWindowLog(limit=2, window=10, clock=clock)
    log.allow()
    clock.advance(6)
    log.allow()
    clock.advance(4)
    assert log.remaining() == 1
    assert log.retry_after() == 0
    log.allow()
    assert log.retry_after() == 6
