//! `vouch render`: a saved JSON review report in other formats, without a model call.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use vouch_report::{Destination, ReportError, ReviewReport, plan_outputs, read_report_text};

use crate::UsageError;
use crate::output::{OutputArgs, with_outputs};

/// Arguments of `vouch render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// A JSON review report (`vouch review --format json`).
    pub report: PathBuf,
    /// Where the documents go, in which formats.
    #[command(flatten)]
    pub output: OutputArgs,
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
pub async fn run(args: &RenderArgs) -> Result<i32> {
    refuse_overwriting_the_input(args)?;
    with_outputs(&args.output, async || Ok((load(&args.report)?, 0))).await
}

/// Destinations are cleared before the run, so a document written over the report being
/// rendered would destroy its own input: refused before anything is touched.
pub(crate) fn refuse_overwriting_the_input(args: &RenderArgs) -> Result<()> {
    let o = &args.output;
    let Ok(outputs) = plan_outputs(&o.format, &o.out, o.out_dir.as_deref()) else {
        return Ok(()); // reported by the output planning itself
    };
    let input = std::fs::canonicalize(&args.report).unwrap_or_else(|_| args.report.clone());
    for output in outputs {
        if let Destination::File(path) = &output.destination {
            let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
            if target == input {
                return Err(UsageError(format!(
                    "--out {} is the report being rendered; write the {} document to another file",
                    path.display(),
                    output.format
                ))
                .into());
            }
        }
    }
    Ok(())
}
