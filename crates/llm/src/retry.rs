//! The retry policy: which failures are retried and how long to wait in between.
//!
//! Pure functions so the policy is table-tested without a network.

use std::time::{Duration, SystemTime};

/// Whether an HTTP status is worth another attempt: 429 (rate limited) and every
/// 5xx (server trouble). Other statuses are the request's fault and are final.
pub(crate) fn is_retryable_status(status: u16) -> bool {
    status == 429 || (500..=599).contains(&status)
}

/// The wait before the next attempt after failed attempt number `attempt` (1-based).
///
/// A server-provided wait (`Retry-After`) is honoured, capped by `max_wait`.
/// Otherwise exponential backoff: `base * 2^(attempt-1)`, capped by `max_wait`.
pub(crate) fn wait_before_retry(
    attempt: u32,
    retry_after: Option<Duration>,
    base: Duration,
    max_wait: Duration,
) -> Duration {
    let wanted = match retry_after {
        Some(wait) => wait,
        None => {
            let factor = 1u32
                .checked_shl(attempt.saturating_sub(1))
                .unwrap_or(u32::MAX);
            base.saturating_mul(factor)
        }
    };
    wanted.min(max_wait)
}

/// Parses a `Retry-After` header value (RFC 9110 §10.2.3): delay-seconds (a
/// non-negative integer; a decimal fraction is accepted too) or an HTTP-date, which is
/// turned into the time left from `now` (zero when already past). Unparseable → `None`.
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    if let Ok(seconds) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).ok();
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses the non-standard `retry-after-ms` header some providers send
/// (milliseconds as an integer or decimal).
pub(crate) fn parse_retry_after_ms(value: &str) -> Option<Duration> {
    let millis = value.trim().parse::<f64>().ok()?;
    Duration::try_from_secs_f64(millis / 1000.0).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;
    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn retryable_statuses() {
        for (status, expected) in [
            (200, false),
            (400, false),
            (401, false),
            (404, false),
            (408, false),
            (429, true),
            (500, true),
            (502, true),
            (503, true),
            (599, true),
        ] {
            assert_eq!(is_retryable_status(status), expected, "{status}");
        }
    }

    #[test]
    fn waits() {
        // (attempt, retry_after, base, max_wait, expected)
        let cases = [
            (1, None, MS(500), S(60), MS(500)),
            (2, None, MS(500), S(60), S(1)),
            (3, None, MS(500), S(60), S(2)),
            (10, None, MS(500), S(60), S(60)),
            (200, None, MS(500), S(60), S(60)),
            (1, Some(S(1)), MS(500), S(60), S(1)),
            (3, Some(S(1)), MS(500), S(60), S(1)),
            (1, Some(S(3600)), MS(500), S(30), S(30)),
            (1, Some(Duration::ZERO), MS(500), S(30), Duration::ZERO),
        ];
        for (attempt, retry_after, base, max_wait, expected) in cases {
            assert_eq!(
                wait_before_retry(attempt, retry_after, base, max_wait),
                expected,
                "attempt {attempt}, retry_after {retry_after:?}"
            );
        }
    }

    #[test]
    fn retry_after_values() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        let cases = [
            ("1", Some(S(1))),
            (" 120 ", Some(S(120))),
            ("0", Some(Duration::ZERO)),
            ("1.5", Some(MS(1500))),
            ("Sun, 06 Nov 1994 08:49:47 GMT", Some(S(10))),
            ("Sun, 06 Nov 1994 08:49:00 GMT", Some(Duration::ZERO)),
            ("-1", None),
            ("soon", None),
            ("", None),
        ];
        for (value, expected) in cases {
            assert_eq!(parse_retry_after(value, now), expected, "{value:?}");
        }
    }

    #[test]
    fn retry_after_ms_values() {
        assert_eq!(parse_retry_after_ms("1500"), Some(MS(1500)));
        assert_eq!(
            parse_retry_after_ms("20.5"),
            Some(Duration::from_micros(20_500))
        );
        assert_eq!(parse_retry_after_ms("x"), None);
        assert_eq!(parse_retry_after_ms("-5"), None);
    }
}
