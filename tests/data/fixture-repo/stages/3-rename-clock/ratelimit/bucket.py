"""The token-bucket rate limiter."""

import math
import threading
from typing import Optional

from .clocks import Clock, MonotonicClock


class TokenBucket:
    """Allows bursts of up to ``capacity`` requests and ``rate`` requests per second
    on average.

    The bucket starts full. Every request takes ``tokens`` tokens (1 by default);
    tokens flow back in continuously at ``rate`` per second, up to ``capacity``.
    A request that asks for more tokens than are available takes none.

    Thread-safe: one bucket may be shared by many threads.
    """

    def __init__(
        self,
        rate: float,
        capacity: float,
        clock: Optional[Clock] = None,
    ) -> None:
        if rate <= 0 or math.isnan(rate):
            raise ValueError(f"rate must be positive (got {rate})")
        if capacity < 1 or math.isnan(capacity):
            raise ValueError(f"capacity must be at least 1 (got {capacity})")
        self._rate = float(rate)
        self._capacity = float(capacity)
        self._clock = clock if clock is not None else MonotonicClock()
        self._tokens = self._capacity
        self._updated = self._clock.now()
        self._lock = threading.Lock()

    @property
    def rate(self) -> float:
        """Tokens added per second."""
        return self._rate

    @property
    def capacity(self) -> float:
        """The most tokens the bucket holds."""
        return self._capacity

    def _refill(self) -> None:
        """Adds the tokens earned since the last update. Caller holds the lock."""
        now = self._clock.now()
        elapsed = now - self._updated
        if elapsed > 0:
            self._tokens = min(self._capacity, self._tokens + elapsed * self._rate)
        # A clock that went backwards earns nothing, but still resets the origin so
        # the next reading is measured from here.
        self._updated = now

    def _check(self, tokens: float) -> None:
        if tokens <= 0 or math.isnan(tokens):
            raise ValueError(f"tokens must be positive (got {tokens})")
        if tokens > self._capacity:
            raise ValueError(
                f"cannot take {tokens} tokens from a bucket of capacity {self._capacity}"
            )

    def try_acquire(self, tokens: float = 1) -> bool:
        """Takes ``tokens`` tokens if they are available; returns whether it did."""
        self._check(tokens)
        with self._lock:
            self._refill()
            if self._tokens >= tokens:
                self._tokens -= tokens
                return True
            return False

    def available(self) -> float:
        """Tokens available right now."""
        with self._lock:
            self._refill()
            return self._tokens

    def time_until(self, tokens: float = 1) -> float:
        """Seconds until ``tokens`` tokens will be available (0 if they are now).

        Useful for a ``Retry-After`` header. Other callers may take the tokens
        first, so this is a lower bound, not a reservation.
        """
        self._check(tokens)
        with self._lock:
            self._refill()
            missing = tokens - self._tokens
            if missing <= 0:
                return 0.0
            return missing / self._rate

    def __repr__(self) -> str:
        return (
            f"TokenBucket(rate={self._rate}, capacity={self._capacity}, "
            f"available={self.available():.3f})"
        )
