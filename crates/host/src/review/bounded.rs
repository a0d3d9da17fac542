//! Stage executions run concurrently under a bound, and none started after one failed:
//! the one runner of the lanes' shards, the audit's shards and the verifier's batches.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, OnceLock};

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use vouch_core::{Failure, FailureKind, StageRecord, StageStatus};

/// Why a job of [`run_until_failure`] has no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum NotRun {
    /// It was not started: the execution named here had failed before its turn.
    AfterFailure(String),
    /// Its task ended abnormally (it panicked), with this message.
    Aborted(String),
}

impl NotRun {
    /// Why, in words, for a stage record or an undecided candidate.
    pub(super) fn reason(&self) -> String {
        match self {
            NotRun::AfterFailure(failed) => {
                format!("not started: {failed} failed, so the review cannot complete")
            }
            NotRun::Aborted(message) => format!("the execution ended abnormally: {message}"),
        }
    }

    /// The record of a stage execution that did not run, from its `base` record: skipped
    /// with [`NotRun::reason`], or, when its task ended abnormally, failed with a
    /// `plugin-error` failure naming it.
    pub(super) fn record(&self, base: StageRecord) -> (StageRecord, Option<Failure>) {
        let reason = self.reason();
        let label = base.label.clone();
        let mut record = StageRecord {
            status: StageStatus::Skipped,
            problem: Some(reason.clone()),
            ..base
        };
        let failure = matches!(self, NotRun::Aborted(_)).then(|| {
            record.status = StageStatus::Failed;
            Failure {
                kind: FailureKind::PluginError,
                stage: Some(label.clone()),
                message: format!("{label}: {reason}"),
                detail: None,
            }
        });
        (record, failure)
    }
}

/// Rule (fail fast): a failed execution makes the review incomplete and nothing it would
/// have published can be published, so once one has failed (`failed` names it, from its
/// result) no further job starts and no further model request is spent. Jobs already
/// running finish and keep their results; a job not started is [`NotRun::AfterFailure`].
///
/// At most `concurrency` jobs run at once, started in the order given (a permit is taken
/// before a task exists). Returns every job with its outcome, in the order given.
pub(super) async fn run_until_failure<J, R, F, Fut>(
    concurrency: usize,
    jobs: Vec<J>,
    start: F,
    failed: fn(&R) -> Option<String>,
) -> Vec<(J, Result<R, NotRun>)>
where
    J: Clone,
    R: Send + 'static,
    F: Fn(J) -> Fut,
    Fut: Future<Output = R> + Send + 'static,
{
    let semaphore = Arc::new(Semaphore::new(concurrency.max(1)));
    // Set by the first execution that fails, before its permit is released.
    let first_failed: Arc<OnceLock<String>> = Arc::new(OnceLock::new());
    let mut outcomes: Vec<Option<Result<R, NotRun>>> = jobs.iter().map(|_| None).collect();
    let mut slots = HashMap::new();
    let mut set = JoinSet::new();
    for (i, job) in jobs.iter().enumerate() {
        let permit = semaphore.clone().acquire_owned().await;
        if let Some(name) = first_failed.get() {
            outcomes[i] = Some(Err(NotRun::AfterFailure(name.clone())));
            continue;
        }
        let execution = start(job.clone());
        let first = first_failed.clone();
        let handle = set.spawn(async move {
            let _permit = permit;
            // Dropped before the permit: a task that panics counts as failed before the
            // next job may take its permit.
            let mut unfinished = Unfinished(Some(first));
            let result = execution.await;
            if let Some(name) = failed(&result)
                && let Some(first) = &unfinished.0
            {
                let _ = first.set(name);
            }
            unfinished.0 = None;
            result
        });
        slots.insert(handle.id(), i);
        // Finished tasks leave the set as they finish: a task's slot is as large as its
        // whole execution's state, its result much smaller.
        while let Some(joined) = set.try_join_next_with_id() {
            settle(joined, &slots, &first_failed, &mut outcomes);
        }
    }
    while let Some(joined) = set.join_next_with_id().await {
        settle(joined, &slots, &first_failed, &mut outcomes);
    }
    jobs.into_iter()
        .zip(outcomes)
        .map(|(job, outcome)| {
            let outcome = outcome.unwrap_or_else(|| Err(NotRun::Aborted("no result".into())));
            (job, outcome)
        })
        .collect()
}

/// Marks the run failed when dropped unfinished (its task panicked).
struct Unfinished(Option<Arc<OnceLock<String>>>);

impl Drop for Unfinished {
    fn drop(&mut self) {
        if let Some(first) = &self.0 {
            let _ = first.set(ABNORMAL.to_string());
        }
    }
}

/// What the stages not started name when an execution panicked.
const ABNORMAL: &str = "an execution that ended abnormally";

/// Puts a finished task's result in its slot; a task that ended abnormally counts as a
/// failure (nothing starts after it).
fn settle<R>(
    joined: Result<(tokio::task::Id, R), tokio::task::JoinError>,
    slots: &HashMap<tokio::task::Id, usize>,
    first_failed: &OnceLock<String>,
    outcomes: &mut [Option<Result<R, NotRun>>],
) {
    match joined {
        Ok((id, result)) => outcomes[slots[&id]] = Some(Ok(result)),
        Err(e) => {
            let _ = first_failed.set(ABNORMAL.to_string());
            outcomes[slots[&e.id()]] = Some(Err(NotRun::Aborted(e.to_string())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A job: its name and whether it fails.
    type Job = (&'static str, bool);

    fn failed(r: &(&'static str, bool)) -> Option<String> {
        r.1.then(|| r.0.to_string())
    }

    async fn run(concurrency: usize, jobs: &[Job]) -> (Vec<Result<Job, NotRun>>, Vec<&str>) {
        let started = Arc::new(Mutex::new(Vec::new()));
        let log = started.clone();
        let out = run_until_failure(
            concurrency,
            jobs.to_vec(),
            move |job: Job| {
                log.lock().unwrap().push(job.0);
                async move {
                    if job.0 == "panics" {
                        panic!("a plugin bug");
                    }
                    job
                }
            },
            failed,
        )
        .await;
        let started = started.lock().unwrap().clone();
        (out.into_iter().map(|(_, r)| r).collect(), started)
    }

    /// One at a time: every job before and at the failure runs, none after it; the rest
    /// name the failed one. Without a failure every job runs, in order.
    #[tokio::test]
    async fn nothing_starts_after_a_failure() {
        let jobs = [("a", false), ("b", true), ("c", false), ("d", true)];
        let (out, started) = run(1, &jobs).await;
        assert_eq!(started, ["a", "b"]);
        assert_eq!(out[0], Ok(("a", false)));
        assert_eq!(out[1], Ok(("b", true)));
        assert_eq!(out[2], Err(NotRun::AfterFailure("b".into())));
        assert_eq!(out[3], Err(NotRun::AfterFailure("b".into())));
        assert!(out[2].clone().unwrap_err().reason().contains("b failed"));

        let clean = [("a", false), ("b", false), ("c", false)];
        let (out, started) = run(1, &clean).await;
        assert_eq!(started, ["a", "b", "c"]);
        assert!(out.iter().all(Result::is_ok));
    }

    proptest::proptest! {
        /// For any jobs, any bound and any interleaving: each result stays with its job;
        /// the jobs not started are a suffix, each naming a job before it that failed;
        /// none is left out when nothing failed; one at a time, exactly the jobs after
        /// the first failure are not started.
        #[test]
        fn jobs_not_started_are_a_suffix_after_a_failure(
            jobs in proptest::collection::vec((proptest::bool::weighted(0.2), 0u8..6), 0..24),
            concurrency in 1usize..5,
        ) {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .build()
                .unwrap();
            let named: Vec<(String, bool, u8)> = jobs
                .iter()
                .enumerate()
                .map(|(i, (fails, yields))| (format!("job {i}"), *fails, *yields))
                .collect();
            let out = runtime.block_on(run_until_failure(
                concurrency,
                named.clone(),
                |(name, fails, yields): (String, bool, u8)| async move {
                    for _ in 0..yields {
                        tokio::task::yield_now().await;
                    }
                    (name, fails)
                },
                |r: &(String, bool)| r.1.then(|| r.0.clone()),
            ));
            proptest::prop_assert_eq!(out.len(), named.len());
            let first_not_started = out.iter().position(|(_, r)| r.is_err());
            for (i, ((job, outcome), want)) in out.iter().zip(&named).enumerate() {
                proptest::prop_assert_eq!(job, want);
                match outcome {
                    Ok((name, fails)) => {
                        proptest::prop_assert!(first_not_started.is_none_or(|f| i < f));
                        proptest::prop_assert_eq!((name, *fails), (&want.0, want.1));
                    }
                    Err(NotRun::AfterFailure(failed)) => {
                        let at = named.iter().position(|j| &j.0 == failed).unwrap();
                        proptest::prop_assert!(at < i && named[at].1);
                    }
                    Err(other) => proptest::prop_assert!(false, "{other:?}"),
                }
            }
            match named.iter().position(|j| j.1) {
                None => proptest::prop_assert!(first_not_started.is_none()),
                Some(first_failure) if concurrency == 1 => {
                    let not_started = out.iter().filter(|(_, r)| r.is_err()).count();
                    proptest::prop_assert_eq!(not_started, named.len() - first_failure - 1);
                }
                Some(_) => {}
            }
        }
    }

    /// A task that panics keeps its slot (results stay aligned with their jobs) and
    /// counts as a failure: nothing starts after it.
    #[tokio::test]
    async fn a_panicking_task_keeps_its_slot_and_stops_the_rest() {
        let jobs = [("a", false), ("panics", false), ("c", false)];
        let (out, started) = run(1, &jobs).await;
        assert_eq!(started, ["a", "panics"]);
        assert_eq!(out.len(), 3);
        assert_eq!(out[0], Ok(("a", false)));
        assert!(matches!(out[1], Err(NotRun::Aborted(_))), "{:?}", out[1]);
        assert!(
            matches!(out[2], Err(NotRun::AfterFailure(_))),
            "{:?}",
            out[2]
        );
    }
}
