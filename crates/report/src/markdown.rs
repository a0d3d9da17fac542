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

/// Untrusted text (paths, model output, labels, messages) as inline Markdown that renders
/// literally: line breaks become spaces (so it never starts a line: callers put it after
/// a label or list marker) and every character CommonMark gives inline meaning is
/// backslash-escaped, so no heading, link, image, HTML or table cell can be injected.
fn text(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '!' | '~' | '&' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    // What would open a block where the text starts (after a list marker, say): a
    // heading, a list item or a setext underline.
    let digits = out.chars().take_while(char::is_ascii_digit).count();
    match out[digits..].chars().next() {
        Some('#' | '-' | '+' | '=') if digits == 0 => out.insert(0, '\\'),
        Some('.' | ')') if digits > 0 => out.insert(digits, '\\'),
        _ => {}
    }
    out
}

/// Untrusted text as a code span: control characters shown as escapes (`\n`), fenced by
/// more backticks than any run inside it.
fn code(raw: &str) -> String {
    let visible: String = raw
        .chars()
        .map(|c| match c {
            '\n' => "\\n".to_string(),
            '\r' => "\\r".to_string(),
            '\t' => "\\t".to_string(),
            c if c.is_control() => format!("\\u{{{:x}}}", c as u32),
            c => c.to_string(),
        })
        .collect();
    let fence = "`".repeat(longest_backtick_run(&visible) + 1);
    let pad = if visible.starts_with('`') || visible.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{visible}{pad}{fence}")
}

/// Untrusted multi-line text as a fenced block no line inside can close.
fn block(raw: &str) -> String {
    let fence = "`".repeat((longest_backtick_run(raw) + 1).max(3));
    format!("{fence}text\n{}\n{fence}", raw.replace('\r', ""))
}

fn longest_backtick_run(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// Files listed before a long list is folded into a collapsible block.
const FILES_SHOWN: usize = 10;

/// The files section: how many changed files were reviewed (in an accepted receipt and
/// seen in full), and every other changed file by name with its reason. A list longer
/// than [`FILES_SHOWN`] shows its first entries and "and N more", then a collapsible
/// block that lists them all.
fn files_section(s: &mut String, report: &ReviewReport) {
    let changed = report.files_reviewed.len() + report.files_not_reviewed.len();
    if changed == 0 {
        return;
    }
    let _ = writeln!(s, "## Files\n");
    let _ = writeln!(
        s,
        "Reviewed {} of {changed} changed file(s) (listed in an accepted coverage receipt and seen in full).\n",
        report.files_reviewed.len()
    );
    if report.files_not_reviewed.is_empty() {
        return;
    }
    let line = |f: &vouch_core::NotReviewedFile| {
        format!(
            "- {} ({}): {}",
            code(&f.path),
            f.reason.as_str(),
            text(&f.detail)
        )
    };
    let all = &report.files_not_reviewed;
    let _ = writeln!(s, "Not reviewed:\n");
    for f in all.iter().take(FILES_SHOWN) {
        let _ = writeln!(s, "{}", line(f));
    }
    if all.len() > FILES_SHOWN {
        let _ = writeln!(s, "- and {} more\n", all.len() - FILES_SHOWN);
        let _ = writeln!(
            s,
            "<details><summary>All {} changed files not reviewed</summary>\n",
            all.len()
        );
        for f in all {
            let _ = writeln!(s, "{}", line(f));
        }
        let _ = writeln!(s, "\n</details>");
    }
    s.push('\n');
}

/// Renders the report as Markdown: opinion, messages, findings with citations and
/// provenance, limitations, per-stage coverage, candidates and their decisions.
pub fn render_markdown(report: &ReviewReport) -> String {
    let mut s = String::new();
    let short = |sha: &str| sha.chars().take(12).collect::<String>();
    let _ = writeln!(s, "# vouch review: {}\n", outcome_heading(report));
    let _ = writeln!(
        s,
        "{} → {} (merge base `{}`) in {}, composition {}: {} file(s), {} hunk(s), +{} −{}.\n",
        code(&report.base.spec),
        code(&report.head.spec),
        short(&report.merge_base),
        code(&report.repository),
        code(&report.composition),
        report.counts.files,
        report.counts.hunks,
        report.counts.additions,
        report.counts.deletions
    );
    let _ = writeln!(s, "Summary: {}\n", text(&report.summary));
    if !report.opinion.not_clean_because.is_empty()
        && report.opinion.outcome != Outcome::NothingToReview
    {
        let _ = writeln!(
            s,
            "Not a clean opinion because: {}.\n",
            text(&report.opinion.not_clean_because.join("; "))
        );
    }
    if !report.messages.is_empty() {
        let _ = writeln!(s, "## Messages\n");
        for m in &report.messages {
            let _ = writeln!(s, "{}\n", block(m));
        }
    }
    if !report.failures.is_empty() {
        let _ = writeln!(s, "## Failures\n");
        for f in &report.failures {
            let stage = f
                .stage
                .as_deref()
                .map(|l| format!(" ({})", text(l)))
                .unwrap_or_default();
            let _ = writeln!(s, "- {}{stage}:\n\n{}\n", name(&f.kind), block(&f.message));
        }
        s.push('\n');
    }
    if !report.findings.is_empty() {
        let _ = writeln!(s, "## Findings\n");
        for (i, f) in report.findings.iter().enumerate() {
            let _ = writeln!(
                s,
                "### {}. \\[{}\\] {}:{}-{} ({})\n\nClaim: {}\n\nEvidence: {}\n",
                i + 1,
                f.severity.as_str(),
                code(&f.path),
                f.start_line,
                f.end_line,
                text(&f.area),
                text(&f.claim),
                text(&f.evidence)
            );
            let _ = writeln!(s, "Citations:");
            for c in &f.citations {
                let _ = writeln!(
                    s,
                    "- {}:{}-{} at {}",
                    code(&c.path),
                    c.start_line,
                    c.end_line,
                    rev(c.revision)
                );
            }
            let p = &f.provenance;
            let _ = writeln!(
                s,
                "\nProposed by {}; verified by {} in {} pass(es).\n",
                text(&p.proposed_by.join(", ")),
                text(&p.verified_by),
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
                .map(|l| format!(" ({})", text(l)))
                .unwrap_or_default();
            let _ = writeln!(s, "- {}{stage}: {}", name(&l.kind), text(&l.detail));
        }
        for e in &report.excluded_files {
            let _ = writeln!(s, "- excluded {}: {}", code(&e.path), text(&e.reason));
        }
        s.push('\n');
    }
    files_section(&mut s, report);
    if !report.stages.is_empty() {
        let _ = writeln!(s, "## Stages\n");
        let _ = writeln!(
            s,
            "| stage | model | status | complete | missing | unexpected | retried | repaired | candidates | requests |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|");
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
                "| {} | {} | {status} | {complete} | {missing} | {unexpected} | {} | {} | {} | {} |",
                text(&st.label),
                st.model.as_deref().map(text).unwrap_or_else(|| "–".into()),
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
                "- {} {}:{}-{} — {} → **{verdict}**{}",
                code(&c.candidate.id),
                code(&c.candidate.path),
                c.candidate.start_line,
                c.candidate.end_line,
                text(&c.candidate.claim),
                c.problem
                    .as_deref()
                    .map(|p| format!(" ({})", text(p)))
                    .unwrap_or_default()
            );
        }
        s.push('\n');
    }
    if !report.observations.is_empty() {
        let _ = writeln!(s, "## Observations\n");
        for o in &report.observations {
            let _ = writeln!(s, "- {}", text(o));
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
