"""Token-bucket and sliding-window rate limiters."""

from .bucket import TokenBucket
from .clock import Clock, ManualClock, MonotonicClock
from .window import SlidingWindowLog

__all__ = [
    "Clock",
    "ManualClock",
    "MonotonicClock",
    "SlidingWindowLog",
    "TokenBucket",
]

__version__ = "0.3.0"
