"""Clocks for the rate limiters.

A clock has a ``now()`` method returning seconds as a float and a ``sleep()``
method that waits on that same time source. Only
differences between readings matter, so a monotonic source is the right default:
wall-clock time can jump backwards when the system clock is adjusted.
"""

import threading
import time
from typing import Protocol


class Clock(Protocol):
    """The time source a limiter reads."""

    def now(self) -> float:
        """Seconds since an arbitrary, fixed origin."""
        ...

    def sleep(self, seconds: float) -> None:
        """Waits ``seconds`` on this clock."""
        ...


class MonotonicClock:
    """``time.monotonic()``: never goes backwards."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class ManualClock:
    """A clock that only moves when told to. For tests and simulations."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        """Moves the clock forward by ``seconds`` (must not be negative)."""
        if seconds < 0:
            raise ValueError(f"cannot move a clock backwards (got {seconds})")
        with self._lock:
            self._now += seconds

    def sleep(self, seconds: float) -> None:
        """Advances the clock instead of waiting, so code that sleeps runs instantly."""
        self.advance(max(0.0, seconds))
