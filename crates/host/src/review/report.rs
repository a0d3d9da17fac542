//! The review's report: the run's records with the messages that close it, assembled
//! and self-checked against the report schema before anyone sees it.

use std::path::Path;

use vouch_core::{ChangeSnapshot, ContextWindow};
use vouch_report::{
    REPORT_SCHEMA_VERSION, ReviewReport, StructuredOutputs, ToolInfo, check_report,
};

use super::ReviewRun;
use super::change::Change;
use super::models::RunModel;
use super::request::ReviewError;

/// What a report says about how it was made, beside the run's own records.
pub(crate) struct ReportContext<'a> {
    /// The reviewed repository.
    pub(crate) repo: &'a Path,
    /// The composition's name.
    pub(crate) composition: &'a str,
    /// Whether structured outputs were requested.
    pub(crate) requested: bool,
    /// Observations made before the run (repository configuration, base URL).
    pub(crate) notes: Vec<String>,
    /// The window the budgets were sized for, when a model was to be called.
    pub(crate) context_window: Option<ContextWindow>,
    /// The command line, as the embedded final report names it.
    pub(crate) command_line: &'a str,
}

/// Assembles and self-checks the report of `run` (taken, so its records are moved into
/// the report rather than held twice).
pub(crate) fn build_report(
    context: ReportContext<'_>,
    run: ReviewRun,
) -> Result<ReviewReport, ReviewError> {
    let snapshot: &ChangeSnapshot = &run.snapshot;
    let mut observations = context.notes;
    observations.extend(run.observations);
    let mut report = ReviewReport {
        schema_version: REPORT_SCHEMA_VERSION.into(),
        tool: ToolInfo {
            name: "vouch".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        repository: context.repo.display().to_string(),
        remote_url: vouch_git::remote_url(context.repo)
            .and_then(|url| vouch_report::repository_uri(&url)),
        base: snapshot.base.clone(),
        head: snapshot.head.clone(),
        merge_base: snapshot.merge_base.clone(),
        composition: context.composition.to_string(),
        opinion: run.opinion,
        summary: String::new(),
        counts: snapshot.counts(),
        changed_files: snapshot.files.clone(),
        expected_files: run.expected_files,
        excluded_files: run.excluded_files,
        files_reviewed: run.files_reviewed,
        files_not_reviewed: run.files_not_reviewed,
        stages: run.stages,
        candidates: run.candidates,
        findings: run.findings,
        limitations: run.limitations,
        failures: run.failures,
        messages: run.messages,
        observations,
        usage: run.usage,
        context_window: context.context_window,
        structured_outputs: StructuredOutputs {
            requested: context.requested,
            fell_back: run.structured_outputs_fell_back,
        },
        final_report: serde_json::Value::Null,
    };
    // The summary and the embedded final report say what the records do, derived as a
    // saved report's check derives them again.
    report.summary = vouch_report::summary_line(&report);
    report.final_report = vouch_report::embedded_final_report(&report, context.command_line)
        .map_err(|e| {
            ReviewError::Internal(format!(
                "vouch's own final report failed its self-check (a bug in vouch): {e}"
            ))
        })?;
    check_report(&mut report).map_err(|e| {
        ReviewError::Internal(format!(
            "vouch's review report failed its self-check (a bug in vouch); nothing was \
             written: {e}"
        ))
    })?;
    Ok(report)
}

/// The messages a run ends with besides its own: a cancellation before the change was
/// prepared, an empty range on the default branch, the endpoint check's messages and a
/// key the endpoint refused during the review. `base_given` and `head` are the range as
/// the user named it.
pub(crate) fn closing_messages(
    (base_given, head): (bool, &str),
    change: &Change,
    model: &RunModel,
    endpoint_messages: Vec<String>,
    run: &mut ReviewRun,
) {
    let snapshot = &change.snapshot;
    if !change.prepared {
        run.messages.push(
            "The review was cancelled while the change was being prepared: no file was \
             reviewed."
                .into(),
        );
    }
    // Every request sent counts, failed and retried ones and the endpoint check too.
    run.usage.requests = u64::from(model.client.requests_sent());
    if !base_given && snapshot.merge_base == snapshot.head.sha {
        run.messages.push(format!(
            "With no --base, the base is the default branch ({}), and its merge base with \
             {head} is {head} itself: you are on the default branch (or behind it), so the \
             range is empty. Pick the base to review against with --base, for example \
             --base HEAD~1 for the last commit.",
            snapshot.base.spec
        ));
    }
    run.messages.extend(endpoint_messages);
    if let (Some(status), Some(e)) = (model.client.refused_key(), &model.endpoint) {
        run.messages
            .push(crate::endpoint::refused_during_review(status, e));
    }
}
