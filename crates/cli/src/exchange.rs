//! `--cache`, `--no-cache`, `--record` and `--replay`: which exchange layer a run's
//! model clients go through (see `vouch_llm::exchange`).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use vouch_core::Outcome;
use vouch_llm::Exchanges;
use vouch_llm::exchange::{
    DEFAULT_CACHE_MAX_BYTES, ExchangeCache, Recorder, RecordingEnd, Replayer,
};
use vouch_report::ReviewReport;

use crate::UsageError;

/// Where model exchanges are cached, recorded or replayed from.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ExchangeArgs {
    /// Answer repeated model requests from this response cache folder and store new
    /// answers there (content-addressed, shareable between runs and processes).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["record", "replay"])]
    pub(crate) cache: Option<PathBuf>,
    /// Use no response cache (also turns off `vouch eval`'s default cache).
    #[arg(long, conflicts_with = "cache")]
    pub(crate) no_cache: bool,
    /// Save every model exchange of this run, in order, as files in DIR (new or empty).
    #[arg(long, value_name = "DIR", conflicts_with = "replay")]
    pub(crate) record: Option<PathBuf>,
    /// Re-run fully offline from a recording made with --record; a request that was
    /// not recorded fails the run (exit 3) with its difference from the recording.
    #[arg(long, value_name = "DIR")]
    pub(crate) replay: Option<PathBuf>,
    /// Size bound of the response cache in MiB; least recently used entries go first.
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_CACHE_MAX_BYTES >> 20)]
    pub(crate) cache_max_mib: u64,
}

impl ExchangeArgs {
    /// Opens the exchange layer these flags ask for; `default_cache` is used when no
    /// layer is named and `--no-cache` is absent (`vouch eval`'s default).
    pub(crate) fn open(&self, default_cache: Option<PathBuf>) -> Result<Option<Arc<Exchanges>>> {
        let usage = |e: vouch_llm::exchange::ExchangeError| UsageError(e.to_string());
        if let Some(dir) = &self.replay {
            let replayer = Replayer::load(dir).map_err(|e| UsageError(format!("--replay {e}")))?;
            return Ok(Some(Arc::new(Exchanges::Replay(replayer))));
        }
        if let Some(dir) = &self.record {
            let recorder =
                Recorder::create(dir).map_err(|e| UsageError(format!("--record {e}")))?;
            return Ok(Some(Arc::new(Exchanges::Record(recorder))));
        }
        if self.no_cache {
            return Ok(None);
        }
        let Some(dir) = self.cache.clone().or(default_cache) else {
            return Ok(None);
        };
        let cache =
            ExchangeCache::open(dir, self.cache_max_mib.saturating_mul(1 << 20)).map_err(usage)?;
        Ok(Some(Arc::new(Exchanges::Cache(cache))))
    }
}

/// The exchange layer of `vouch review` (no cache unless `--cache` names one).
pub(crate) fn open(args: &ExchangeArgs) -> Result<Option<Arc<Exchanges>>> {
    args.open(None)
}

/// After a recorded review: the recording says how the review ended (complete,
/// cancelled, failed), so a replay of a recording cut short is refused as incomplete.
/// A state that cannot be written leaves it reading as never finished, which a replay
/// refuses too.
pub(crate) fn end_recording(exchanges: Option<&Exchanges>, report: &Result<ReviewReport>) {
    let Some(Exchanges::Record(recorder)) = exchanges else {
        return;
    };
    let end = match report {
        Ok(report) if report.opinion.outcome == Outcome::Aborted => RecordingEnd::Cancelled,
        Ok(_) => RecordingEnd::Complete,
        Err(_) => RecordingEnd::Failed,
    };
    if let Err(e) = recorder.finish(end) {
        tracing::warn!(error = %e, "could not mark how the recorded review ended");
    }
}

/// After a replayed review: the first request that was not recorded, or recorded
/// exchanges the review never asked for, fail the run (exit 3).
pub(crate) fn check_replay(exchanges: Option<&Exchanges>) -> Result<()> {
    let Some(Exchanges::Replay(replayer)) = exchanges else {
        return Ok(());
    };
    if let Some(mismatch) = replayer.first_mismatch() {
        return Err(UsageError(format!(
            "{mismatch}\nThe review no longer sends the recorded requests; if the change is intended, record it again (see docs/eval.md)."
        ))
        .into());
    }
    let unused = replayer.unused();
    if unused > 0 {
        return Err(UsageError(format!(
            "the replay left {unused} recorded exchange(s) unused: the review sent fewer requests than were recorded; if intended, record it again (see docs/eval.md)"
        ))
        .into());
    }
    Ok(())
}
