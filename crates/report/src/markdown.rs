//! Markdown rendering of a review report, for people.

use std::fmt::Write;

use vouch_core::{Outcome, Revision, StageStatus};

use crate::model::ReviewReport;

fn outcome_heading(report: &ReviewReport) -> String {
    let o = &report.opinion;
    let coverage = match o.coverage {
        Some(vouch_core::CoverageLevel::Full) => ", full coverage",
        Some(vouch_core::CoverageLevel::Limited) => ", limited coverage",
        None => "",
    };
    let outcome = match o.outcome {
        Outcome::NothingToReview => "Nothing to review",
        Outcome::Aborted => "Aborted",
        Outcome::Incomplete => "Incomplete: nothing published",
        Outcome::Findings => "Verified findings",
        Outcome::NoFindings if o.clean => "Clean",
        Outcome::NoFindings => "No verified findings",
    };
    format!("{outcome}{coverage}")
}

/// The kebab-case JSON name of an enum value (as the JSON report spells it).
fn name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn rev(r: Revision) -> &'static str {
    match r {
        Revision::Head => "head",
        Revision::Base => "base",
    }
}

/// Renders the report as Markdown: opinion, messages, findings with citations and
/// provenance, limitations, per-stage coverage, candidates and their decisions.
pub fn render_markdown(report: &ReviewReport) -> String {
    let mut s = String::new();
    let short = |sha: &str| sha.chars().take(12).collect::<String>();
    let _ = writeln!(s, "# vouch review: {}\n", outcome_heading(report));
    let _ = writeln!(
        s,
        "`{}` → `{}` (merge base `{}`) in `{}`, composition `{}`: {} file(s), {} hunk(s), +{} −{}.\n",
        report.base.spec,
        report.head.spec,
        short(&report.merge_base),
        report.repository,
        report.composition,
        report.counts.files,
        report.counts.hunks,
        report.counts.additions,
        report.counts.deletions
    );
    let _ = writeln!(s, "{}\n", report.summary);
    if !report.opinion.not_clean_because.is_empty()
        && report.opinion.outcome != Outcome::NothingToReview
    {
        let _ = writeln!(
            s,
            "Not a clean opinion because: {}.\n",
            report.opinion.not_clean_because.join("; ")
        );
    }
    if !report.messages.is_empty() {
        let _ = writeln!(s, "## Messages\n");
        for m in &report.messages {
            let _ = writeln!(s, "```text\n{m}\n```\n");
        }
    }
    if !report.failures.is_empty() {
        let _ = writeln!(s, "## Failures\n");
        for f in &report.failures {
            let stage = f
                .stage
                .as_deref()
                .map(|l| format!(" ({l})"))
                .unwrap_or_default();
            let _ = writeln!(s, "- {}{stage}: {}", name(&f.kind), f.message);
        }
        s.push('\n');
    }
    if !report.findings.is_empty() {
        let _ = writeln!(s, "## Findings\n");
        for (i, f) in report.findings.iter().enumerate() {
            let _ = writeln!(
                s,
                "### {}. [{}] {}:{}-{} ({})\n\n{}\n\n{}\n",
                i + 1,
                f.severity.as_str(),
                f.path,
                f.start_line,
                f.end_line,
                f.area,
                f.claim,
                f.evidence
            );
            let _ = writeln!(s, "Citations:");
            for c in &f.citations {
                let _ = writeln!(
                    s,
                    "- `{}:{}-{}` at {}",
                    c.path,
                    c.start_line,
                    c.end_line,
                    rev(c.revision)
                );
            }
            let p = &f.provenance;
            let _ = writeln!(
                s,
                "\nProposed by {}; verified by {} in {} pass(es).\n",
                p.proposed_by.join(", "),
                p.verified_by,
                p.verification_passes
            );
        }
    }
    if !report.limitations.is_empty() || !report.excluded_files.is_empty() {
        let _ = writeln!(s, "## Coverage limitations\n");
        for l in &report.limitations {
            let stage = l
                .stage
                .as_deref()
                .map(|l| format!(" ({l})"))
                .unwrap_or_default();
            let _ = writeln!(s, "- {}{stage}: {}", name(&l.kind), l.detail);
        }
        for e in &report.excluded_files {
            let _ = writeln!(s, "- excluded `{}`: {}", e.path, e.reason);
        }
        s.push('\n');
    }
    if !report.stages.is_empty() {
        let _ = writeln!(s, "## Stages\n");
        let _ = writeln!(
            s,
            "| stage | status | complete | missing | unexpected | retried | repaired | candidates | requests |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|");
        for st in &report.stages {
            let (complete, missing, unexpected) = match &st.coverage {
                Some(c) => (
                    c.complete.to_string(),
                    c.missing_files.len().to_string(),
                    c.unexpected_files.len().to_string(),
                ),
                None => ("–".into(), "–".into(), "–".into()),
            };
            let status = match st.status {
                StageStatus::Accepted => "accepted",
                StageStatus::Limited => "limited",
                StageStatus::Failed => "failed",
                StageStatus::Cancelled => "cancelled",
                StageStatus::Skipped => "skipped",
            };
            let _ = writeln!(
                s,
                "| {} | {status} | {complete} | {missing} | {unexpected} | {} | {} | {} | {} |",
                st.label,
                if st.retried { "yes" } else { "no" },
                if st.repaired { "yes" } else { "no" },
                st.candidates,
                st.usage.requests
            );
        }
        s.push('\n');
    }
    if !report.candidates.is_empty() {
        let _ = writeln!(s, "## Candidates and decisions\n");
        for c in &report.candidates {
            let verdict = c
                .verdict
                .map(|v| format!("{v:?}").to_lowercase())
                .unwrap_or_else(|| "no valid decision".into());
            let _ = writeln!(
                s,
                "- `{}` {}:{}-{} — {} → **{verdict}**{}",
                c.candidate.id,
                c.candidate.path,
                c.candidate.start_line,
                c.candidate.end_line,
                c.candidate.claim,
                c.problem
                    .as_deref()
                    .map(|p| format!(" ({p})"))
                    .unwrap_or_default()
            );
        }
        s.push('\n');
    }
    if !report.observations.is_empty() {
        let _ = writeln!(s, "## Observations\n");
        for o in &report.observations {
            let _ = writeln!(s, "- {o}");
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "Model usage: {} request(s), {} prompt and {} completion token(s).",
        report.usage.requests, report.usage.prompt_tokens, report.usage.completion_tokens
    );
    s
}
