"""The sliding-window-log rate limiter."""

import threading
from collections import deque
from typing import Deque, Optional

from .clocks import Clock, MonotonicClock


class SlidingWindowLog:
    """Allows at most ``limit`` events in any interval of ``window`` seconds.

    Keeps the timestamp of every allowed event inside the current window, so
    memory is O(limit). Exact, unlike fixed windows, which allow up to twice the
    limit around a window boundary.

    Thread-safe.
    """

    def __init__(
        self,
        limit: int,
        window: float,
        clock: Optional[Clock] = None,
    ) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1 (got {limit})")
        if window <= 0:
            raise ValueError(f"window must be positive (got {window})")
        self._limit = int(limit)
        self._window = float(window)
        self._clock = clock if clock is not None else MonotonicClock()
        self._events: Deque[float] = deque()
        self._lock = threading.Lock()

    def _expire(self, now: float) -> None:
        """Drops events that left the window. Caller holds the lock."""
        horizon = now - self._window
        while self._events and self._events[0] <= horizon:
            self._events.popleft()

    def allow(self) -> bool:
        """Records an event and returns True if it fits in the window."""
        with self._lock:
            now = self._clock.now()
            self._expire(now)
            if len(self._events) < self._limit:
                self._events.append(now)
                return True
            return False

    def remaining(self) -> int:
        """Events still allowed in the current window."""
        with self._lock:
            self._expire(self._clock.now())
            return self._limit - len(self._events)

    def retry_after(self) -> float:
        """Seconds until the next event would be allowed (0 if one is now)."""
        with self._lock:
            now = self._clock.now()
            self._expire(now)
            if len(self._events) < self._limit:
                return 0.0
            return self._events[0] + self._window - now
