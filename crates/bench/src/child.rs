//! Running a child process and measuring it: wall time, CPU time and peak RSS from the
//! kernel's own accounting of that one child (`wait4`).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one child process cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    /// Wall time from spawn to exit.
    pub wall: Duration,
    /// User plus system CPU time of the child.
    pub cpu: Duration,
    /// Peak resident set size of the child, in bytes.
    pub max_rss: u64,
    /// Exit code (`None` when ended by a signal).
    pub code: Option<i32>,
    /// Whether the child was stopped because it ran past its time limit.
    pub timed_out: bool,
}

/// Errors running a measured child.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    /// The program could not be started.
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// Waiting for the child failed.
    #[error("waiting for {program} failed: {source}")]
    Wait {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Runs `command` (stdout and stderr discarded unless the caller set them) to its end or
/// until `limit`, when it gets SIGTERM and, 10 s later, SIGKILL.
pub async fn measure(mut command: Command, limit: Duration) -> Result<Usage, ChildError> {
    let program = command.get_program().to_string_lossy().into_owned();
    command.stdin(Stdio::null());
    let started = Instant::now();
    let child = command.spawn().map_err(|source| ChildError::Spawn {
        program: program.clone(),
        source,
    })?;
    let pid = child.id() as libc::pid_t;
    let mut waiter = tokio::task::spawn_blocking(move || wait4(pid));
    let mut timed_out = false;
    let waited = match tokio::time::timeout(limit, &mut waiter).await {
        Ok(done) => done,
        Err(_) => {
            timed_out = true;
            signal(pid, libc::SIGTERM);
            match tokio::time::timeout(Duration::from_secs(10), &mut waiter).await {
                Ok(done) => done,
                Err(_) => {
                    signal(pid, libc::SIGKILL);
                    waiter.await
                }
            }
        }
    };
    let (status, usage) = waited
        .expect("the wait task does not panic")
        .map_err(|source| ChildError::Wait { program, source })?;
    let cpu = timeval(usage.ru_utime) + timeval(usage.ru_stime);
    Ok(Usage {
        wall: started.elapsed(),
        cpu,
        // Linux reports ru_maxrss in KiB.
        max_rss: (usage.ru_maxrss.max(0) as u64) * 1024,
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        timed_out,
    })
}

fn wait4(pid: libc::pid_t) -> std::io::Result<(i32, libc::rusage)> {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our own child, not yet reaped; both pointers are valid for
        // writes for the duration of the call.
        let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if got == pid {
            return Ok((status, usage));
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

fn signal(pid: libc::pid_t, sig: libc::c_int) {
    // SAFETY: sending a signal to our own child's pid, which is not yet reaped (so not
    // reused); failure (already exited) is harmless.
    unsafe {
        libc::kill(pid, sig);
    }
}

fn timeval(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_child_is_measured_and_a_slow_one_is_stopped() {
        let mut busy = Command::new("sh");
        busy.args([
            "-c",
            "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3",
        ]);
        let usage = measure(busy, Duration::from_secs(60)).await.unwrap();
        assert_eq!(usage.code, Some(3));
        assert!(!usage.timed_out);
        assert!(usage.cpu > Duration::ZERO);
        assert!(usage.max_rss > 0);

        let mut slow = Command::new("sleep");
        slow.arg("30");
        let usage = measure(slow, Duration::from_millis(200)).await.unwrap();
        assert!(usage.timed_out);
        assert_eq!(usage.code, None);
    }
}
