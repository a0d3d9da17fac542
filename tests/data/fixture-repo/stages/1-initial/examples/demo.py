"""Shows a token bucket smoothing a burst of 25 requests."""

from ratelimit.clock import ManualClock
from ratelimit import TokenBucket

clock = ManualClock()
bucket = TokenBucket(rate=5, capacity=10, clock=clock)

for second in range(5):
    allowed = sum(bucket.try_acquire() for _ in range(5))
    print(f"t={second}s allowed {allowed}/5, {bucket.available():.1f} tokens left")
    clock.advance(1)
