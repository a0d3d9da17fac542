//! One publish: load the pull request, compose, plan, execute.

use vouch_report::ReviewReport;

use crate::client::Api;
use crate::compose::{PrFacts, compose};
use crate::error::ForgeError;
use crate::forge::{Target, Token};
use crate::plan::{SummaryAction, plan};

/// What a publish did, for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishSummary {
    /// `created`, `updated` or `unchanged`.
    pub summary: &'static str,
    /// The summary comment's id.
    pub summary_id: String,
    /// Inline comments created.
    pub created: usize,
    /// Inline comments left as they were.
    pub kept: usize,
    /// Inline comments resolved or marked resolved.
    pub resolved: usize,
    /// Inline comments reopened.
    pub reopened: usize,
    /// Things the user may need to do by hand.
    pub warnings: Vec<String>,
}

impl PublishSummary {
    /// One line for the log.
    pub fn line(&self, target: &Target) -> String {
        format!(
            "Published to {} {}: summary comment {} ({}); inline comments: {} created, {} kept, {} resolved, {} reopened.",
            target.forge.display_name(),
            target.display(),
            self.summary_id,
            self.summary,
            self.created,
            self.kept,
            self.resolved,
            self.reopened
        )
    }
}

/// Publishes a checked report to `target`: one summary comment (created or updated in
/// place), inline comments for verified findings on diff lines, and resolution of
/// comments whose finding is gone.
///
/// # Errors
/// The first forge request that failed ([`ForgeError`] names what to fix).
pub async fn publish(
    report: &ReviewReport,
    target: &Target,
    token: Token,
) -> Result<PublishSummary, ForgeError> {
    let api = Api::new(target.clone(), token);
    let state = api.load().await?;
    let facts = PrFacts {
        head: &state.head_sha,
        merge_base: state.merge_base.as_deref(),
        listed_all: state.listed_all,
    };
    let composed = compose(report, &state.diff, facts, &target.repo_slug);
    let plan = plan(&composed, &state.existing, &report.head.sha);
    let executed = api.execute(&plan, &state, &report.head.sha).await?;
    let (created, kept, resolved, reopened) = plan.counts();
    let summary = match plan.summary {
        SummaryAction::Create { .. } => "created",
        SummaryAction::Update { .. } => "updated",
        SummaryAction::Unchanged { .. } => "unchanged",
    };
    Ok(PublishSummary {
        summary,
        summary_id: executed.summary_id,
        created,
        kept,
        resolved,
        reopened,
        warnings: executed.warnings,
    })
}
