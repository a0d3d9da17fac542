//! `vouch render`: a saved JSON review report in other formats, without a model call.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use vouch_report::{ReportError, ReviewReport, read_report_text};

use crate::UsageError;
use crate::output::{OutputArgs, refuse_overwriting, with_outputs};

/// Arguments of `vouch render`.
#[derive(Debug, Args)]
pub(crate) struct RenderArgs {
    /// A JSON review report (`vouch review --format json`).
    pub(crate) report: PathBuf,
    /// Where the documents go, in which formats.
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

/// Reads and checks a saved report ([`read_report_text`]): it must be a
/// `vouch.review-report/2` document that passes the same self-check as when it was
/// written.
fn load(path: &std::path::Path) -> Result<ReviewReport> {
    let what = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("cannot read the report {what}: {e}")))?;
    let report = read_report_text(&text).map_err(|e| match e {
        ReportError::Rule(_) | ReportError::FinalReport(_) => {
            UsageError(format!("{what} fails the report check: {e}"))
        }
        ReportError::Schema(_) => UsageError(format!("{what} is not a valid review report: {e}")),
        ReportError::NotJson(_) | ReportError::Version(_) => UsageError(format!("{what}: {e}")),
    })?;
    Ok(report)
}

/// Runs `vouch render`: exit 0 when every document was written, 3 when the report
/// cannot be read (each requested document then is the format's failure document).
pub(crate) async fn run(args: &RenderArgs) -> Result<i32> {
    refuse_overwriting(&args.report, &args.output)?;
    with_outputs(&args.output, async || Ok((load(&args.report)?, 0))).await
}
