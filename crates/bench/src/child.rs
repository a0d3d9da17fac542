//! Running a child process and measuring it: wall time, CPU time and peak RSS from the
//! kernel's own accounting of that one child (`wait4`).
//!
//! The child is started by a small measuring process ([`MEASURE_ARG`]), not by the
//! benchmark itself: Linux reports as a child's peak RSS at least the high-water mark of
//! the memory it was spawned from (a `vfork`ed child's `ru_maxrss` starts at its parent's,
//! taken at `exec`), and the benchmark holds generated repositories, snapshots and
//! recorded requests. The measuring process is the benchmark binary just started, a few
//! MiB, so what it reports is the child's own peak.

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

/// The first argument that makes the benchmark binary a measuring process:
/// `MEASURE_ARG LIMIT_MS RESULT_FILE PROGRAM [ARGS...]` runs PROGRAM with [`measure`]'s
/// rules and writes its [`Usage`] to RESULT_FILE ([`measuring_process`]).
pub const MEASURE_ARG: &str = "__measure-child";

/// Runs `program` with `args` through the measuring process `measurer` (the benchmark
/// binary), with `env` set (`None`: removed), its stdin, stdout and stderr discarded, to
/// its end or until `limit` (see [`measure`]).
///
/// # Errors
/// The measuring process could not be run, or reported no usage.
pub fn measure_via(
    measurer: &std::path::Path,
    command: &Command,
    limit: Duration,
) -> Result<Usage, ChildError> {
    let program = command.get_program().to_string_lossy().into_owned();
    let result = tempfile::NamedTempFile::new().map_err(|source| ChildError::Spawn {
        program: program.clone(),
        source,
    })?;
    let mut outer = Command::new(measurer);
    outer
        .arg(MEASURE_ARG)
        .arg(limit.as_millis().to_string())
        .arg(result.path())
        .arg(command.get_program())
        .args(command.get_args())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(dir) = command.get_current_dir() {
        outer.current_dir(dir);
    }
    for (key, value) in command.get_envs() {
        match value {
            Some(v) => outer.env(key, v),
            None => outer.env_remove(key),
        };
    }
    let status = outer.status().map_err(|source| ChildError::Spawn {
        program: program.clone(),
        source,
    })?;
    let text = std::fs::read_to_string(result.path()).unwrap_or_default();
    Usage::parse(&text).ok_or_else(|| ChildError::Wait {
        program,
        source: std::io::Error::other(format!(
            "the measuring process ended ({status}) without a usage"
        )),
    })
}

/// The measuring process: `args` are what follows [`MEASURE_ARG`]. Runs the program with
/// inherited stdio and environment and writes its usage to the result file.
///
/// # Errors
/// Malformed arguments, or the child could not be run or its usage written.
pub async fn measuring_process(args: &[String]) -> Result<(), ChildError> {
    let malformed = || ChildError::Spawn {
        program: MEASURE_ARG.into(),
        source: std::io::Error::other("expected LIMIT_MS RESULT_FILE PROGRAM [ARGS...]"),
    };
    let [limit, result, program, rest @ ..] = args else {
        return Err(malformed());
    };
    let limit = Duration::from_millis(limit.parse().map_err(|_| malformed())?);
    let mut command = Command::new(program);
    command.args(rest);
    let usage = measure(command, limit).await?;
    std::fs::write(result, usage.line()).map_err(|source| ChildError::Wait {
        program: program.clone(),
        source,
    })
}

impl Usage {
    /// One line: wall and CPU nanoseconds, peak RSS bytes, exit code (-1: none), timed
    /// out (0/1).
    fn line(&self) -> String {
        format!(
            "{} {} {} {} {}",
            self.wall.as_nanos(),
            self.cpu.as_nanos(),
            self.max_rss,
            self.code.unwrap_or(-1),
            u8::from(self.timed_out)
        )
    }

    fn parse(line: &str) -> Option<Usage> {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [wall, cpu, rss, code, timed_out] = f.as_slice() else {
            return None;
        };
        let nanos = |s: &str| s.parse::<u64>().ok().map(Duration::from_nanos);
        let code: i32 = code.parse().ok()?;
        Some(Usage {
            wall: nanos(wall)?,
            cpu: nanos(cpu)?,
            max_rss: rss.parse().ok()?,
            code: (code >= 0).then_some(code),
            timed_out: *timed_out == "1",
        })
    }
}

/// Runs `command` (stdout and stderr discarded unless the caller set them) to its end or
/// until `limit`, when it gets SIGTERM and, 10 s later, SIGKILL. Its peak RSS is at least
/// this process's own high-water mark (see the module note): large callers measure
/// through [`measure_via`].
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

        let line = usage.line();
        assert_eq!(Usage::parse(&line), Some(usage), "{line}");

        let mut slow = Command::new("sleep");
        slow.arg("30");
        let usage = measure(slow, Duration::from_millis(200)).await.unwrap();
        assert!(usage.timed_out);
        assert_eq!(usage.code, None);
    }
}
