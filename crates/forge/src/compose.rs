//! What a report asks to be shown on a pull request: one summary comment and one inline
//! comment per verified finding that sits on lines of the forge's diff. Pure functions.

use std::collections::BTreeSet;
use std::fmt::Write;

use sha2::{Digest, Sha256};
use vouch_core::{Finding, Outcome, Revision};
use vouch_report::{MarkdownOptions, ReviewReport, render_markdown_with};

use crate::diff::DiffLines;

/// The hidden marker that identifies vouch's summary comment.
pub const SUMMARY_MARKER: &str = "<!-- vouch:summary -->";
/// The hidden marker, on the summary's second line, of the head the summary reviewed:
/// `<!-- vouch:head SHA -->`.
pub const HEAD_MARKER_PREFIX: &str = "<!-- vouch:head ";

/// Whether `body` is a vouch summary: it starts with [`SUMMARY_MARKER`], as vouch writes
/// it. A comment that only quotes the marker (a reply, a quote) is not one.
pub fn is_summary(body: &str) -> bool {
    body.trim_start().starts_with(SUMMARY_MARKER)
}

/// The reviewed head a summary states on its second line ([`HEAD_MARKER_PREFIX`]), if it
/// is a summary ([`is_summary`]) and states one.
pub fn summary_head(body: &str) -> Option<&str> {
    let rest = body.trim_start().strip_prefix(SUMMARY_MARKER)?;
    let rest = rest
        .trim_start_matches(['\r', '\n'])
        .strip_prefix(HEAD_MARKER_PREFIX)?;
    let sha = &rest[..rest.find(" -->")?];
    sha.bytes().all(|b| b.is_ascii_hexdigit()).then_some(sha)
}

/// The hidden marker vouch adds to an inline comment whose finding no longer appears.
pub const RESOLVED_MARKER: &str = "<!-- vouch:resolved -->";
/// The longest comment body vouch posts (GitHub refuses more than 65,536 characters).
pub const COMMENT_CAP: usize = 60_000;

const FINDING_MARKER_PREFIX: &str = "<!-- vouch:finding:";

/// The hidden marker of the inline comment for the finding with `key`.
pub fn finding_marker(key: &str) -> String {
    format!("{FINDING_MARKER_PREFIX}{key} -->")
}

/// The finding key in a comment body's marker, if the body carries one.
pub fn marker_key(body: &str) -> Option<String> {
    let start = body.find(FINDING_MARKER_PREFIX)? + FINDING_MARKER_PREFIX.len();
    let rest = &body[start..];
    let key = &rest[..rest.find(" -->")?];
    (key.len() == 16 && key.bytes().all(|b| b.is_ascii_hexdigit())).then(|| key.to_string())
}

/// A finding's key: the same finding (path, side, lines, area, claim) gets the same key
/// on every run; a finding that moves or is reworded is a new finding.
pub fn finding_key(f: &Finding) -> String {
    let mut h = Sha256::new();
    for part in [
        f.path.as_str(),
        f.revision.as_str(),
        &f.start_line.to_string(),
        &f.end_line.to_string(),
        f.area.as_str(),
        &f.claim,
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One inline comment the report asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesiredInline {
    /// [`finding_key`].
    pub key: String,
    /// Head path.
    pub path: String,
    /// Base path (renames).
    pub old_path: String,
    /// First head line.
    pub start_line: u32,
    /// Last head line: where the comment sits.
    pub line: u32,
    /// Base line of `line` when it is unchanged context (GitLab needs it).
    pub old_line: Option<u32>,
    /// The comment body, marker included.
    pub body: String,
}

/// What the report asks to be shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Composed {
    /// The summary comment body, marker included, at most [`COMMENT_CAP`] characters.
    pub summary: String,
    /// Inline comments for verified findings on diff lines.
    pub inline: Vec<DesiredInline>,
    /// Keys of every published finding (inline or in the summary).
    pub reported_keys: BTreeSet<String>,
    /// True when the review completed (`findings` or `no-findings`), so a finding
    /// missing from it is really gone.
    pub completed: bool,
    /// The pull request's head when it is not the reviewed head: the review is of an
    /// earlier head, so it replaces no newer summary and resolves no comment.
    pub stale_for: Option<String>,
    /// Files the pull request changes that the reviewed range does not (another base, a
    /// range narrower than the pull request): the review covers part of it, so it
    /// resolves no comment.
    pub uncovered: Vec<String>,
    /// True when the review's range is not known to be the pull request's (another merge
    /// base, or a file list the forge served only in part): it resolves no comment.
    pub other_range: bool,
}

/// What the forge says of the pull request as it is now.
#[derive(Debug, Clone, Copy)]
pub struct PrFacts<'a> {
    /// Its head commit.
    pub head: &'a str,
    /// Its merge base, when the forge says (GitLab's `diff_refs.base_sha`, Gitea's
    /// `merge_base`, GitHub's compare of base and head).
    pub merge_base: Option<&'a str>,
    /// False when the forge listed fewer files than the pull request changes (GitHub
    /// lists at most 3,000).
    pub listed_all: bool,
}

/// Rule (publishing): a verified finding becomes an inline comment when the review
/// published it, it is on the head side, the pull request's head is the reviewed head,
/// and every line of it is a commentable line of the forge's diff; every other published
/// finding is listed in the summary. An incomplete or aborted review publishes no
/// finding: only the summary, saying why. The summary names the repository by
/// `repo_label` (the forge's slug), never by the runner's local path.
pub fn compose(
    report: &ReviewReport,
    diff: &DiffLines,
    pr: PrFacts<'_>,
    repo_label: &str,
) -> Composed {
    let pr_head = pr.head;
    let stale = pr_head != report.head.sha;
    let completed = matches!(
        report.opinion.outcome,
        Outcome::Findings | Outcome::NoFindings
    );
    let published: &[Finding] = if report.opinion.publish_findings {
        &report.findings
    } else {
        &[]
    };
    let mut inline = Vec::new();
    let mut outside = Vec::new();
    for f in published {
        let placeable = !stale
            && f.revision == Revision::Head
            && diff.covers(&f.path, f.start_line, f.end_line);
        match diff.file(&f.path).filter(|_| placeable) {
            Some(file) => {
                let key = finding_key(f);
                inline.push(DesiredInline {
                    body: inline_body(&key, f),
                    key,
                    path: f.path.clone(),
                    old_path: file.old_path.clone(),
                    start_line: f.start_line,
                    line: f.end_line,
                    old_line: file.lines.get(&f.end_line).copied().flatten(),
                });
            }
            None => outside.push(f),
        }
    }
    let reported_keys = published.iter().map(finding_key).collect();
    let mut shown = report.clone();
    shown.repository = repo_label.to_string();
    let uncovered = uncovered_files(report, diff);
    let scope = Scope {
        stale_head: stale.then_some(pr_head),
        uncovered: &uncovered,
        other_base: pr.merge_base.filter(|mb| *mb != report.merge_base),
        listed_all: pr.listed_all,
        base_known: pr.merge_base.is_some(),
    };
    let summary = summary_body(&shown, inline.len(), &outside, scope);
    Composed {
        summary,
        stale_for: stale.then(|| pr_head.to_string()),
        other_range: scope.other_base.is_some() || !pr.listed_all || pr.merge_base.is_none(),
        uncovered,
        inline,
        reported_keys,
        completed,
    }
}

/// The body of an inline comment: marker, severity and area, claim, evidence, citations
/// and provenance.
pub fn inline_body(key: &str, f: &Finding) -> String {
    let mut s = finding_marker(key);
    let _ = write!(
        s,
        "\n**vouch: {} {}** ({})\n\n{}\n\nEvidence: {}\n\n",
        f.severity.as_str(),
        text(f.area.as_str()),
        lines(f),
        text(&f.claim),
        text(&f.evidence)
    );
    let _ = writeln!(s, "Citations: {}", citations(f));
    let p = &f.provenance;
    let _ = write!(
        s,
        "\nProposed by {}; verified by {}.",
        text(&p.proposed_by.join(", ")),
        text(&p.verified_by)
    );
    s
}

/// The body that replaces an inline comment whose finding no longer appears: the marker
/// kept, [`RESOLVED_MARKER`] added, the old text under a fold.
pub fn resolved_body(key: &str, old_body: &str, reviewed_head: &str) -> String {
    let old = old_body.replace(&finding_marker(key), "");
    let short: String = reviewed_head.chars().take(12).collect();
    let mut s = format!(
        "{}\n{RESOLVED_MARKER}\n**Resolved:** vouch no longer reports this finding (review of `{short}`).\n\n<details><summary>Previous comment</summary>\n\n{}\n\n</details>",
        finding_marker(key),
        old.trim()
    );
    cap(&mut s, "");
    s
}

fn lines(f: &Finding) -> String {
    let side = if f.revision == Revision::Base {
        " (base)"
    } else {
        ""
    };
    if f.start_line == f.end_line {
        format!("{} line {}{side}", code(&f.path), f.start_line)
    } else {
        format!(
            "{} lines {}–{}{side}",
            code(&f.path),
            f.start_line,
            f.end_line
        )
    }
}

fn citations(f: &Finding) -> String {
    let list: Vec<String> = f
        .citations
        .iter()
        .map(|c| {
            format!(
                "{}:{}-{} at {}",
                code(&c.path),
                c.start_line,
                c.end_line,
                c.revision.as_str()
            )
        })
        .collect();
    if list.is_empty() {
        "none".into()
    } else {
        list.join(", ")
    }
}

fn heading(report: &ReviewReport) -> &'static str {
    let o = &report.opinion;
    match o.outcome {
        Outcome::NothingToReview => "nothing to review",
        Outcome::Aborted => "aborted, nothing published",
        Outcome::Incomplete => "incomplete, nothing published",
        Outcome::Findings => "verified findings",
        Outcome::NoFindings if o.clean => "clean",
        Outcome::NoFindings => "no verified findings (not a clean opinion)",
    }
}

/// Rule (a review of part of a pull request): the files the forge lists for the pull
/// request that the report's changed files do not hold (at head or as a previous path):
/// the reviewed range is not the pull request's (another base, or a narrower range).
fn uncovered_files(report: &ReviewReport, diff: &DiffLines) -> Vec<String> {
    diff.paths()
        .filter(|p| {
            !report
                .changed_files
                .iter()
                .any(|f| f.path == *p || f.previous_path.as_deref() == Some(*p))
        })
        .map(str::to_string)
        .collect()
}

/// How much of the pull request as it is now the review covers.
#[derive(Clone, Copy)]
struct Scope<'a> {
    /// The pull request's head, when it moved past the reviewed one.
    stale_head: Option<&'a str>,
    /// Files the pull request changes outside the reviewed range.
    uncovered: &'a [String],
    /// The pull request's merge base, when it is not the reviewed one.
    other_base: Option<&'a str>,
    /// False when the forge listed only some of the pull request's files.
    listed_all: bool,
    /// False when the forge did not say the pull request's merge base.
    base_known: bool,
}

impl Scope<'_> {
    /// What the summary's heading adds after "vouch review" when the review is not of
    /// the pull request as it is now (the first that holds).
    fn heading(&self, report: &ReviewReport) -> String {
        if self.stale_head.is_some() {
            format!(" of `{}`, an earlier head", short_sha(&report.head.sha))
        } else if self.other_base.is_some() {
            " of another range than this pull request's".to_string()
        } else if !self.uncovered.is_empty() {
            " of part of this pull request".to_string()
        } else if !self.listed_all || !self.base_known {
            " (whether it covers this pull request's range could not be checked)".to_string()
        } else {
            String::new()
        }
    }

    /// The summary's paragraphs on what of the pull request the review does not cover.
    fn paragraphs(&self, report: &ReviewReport) -> String {
        let mut s = String::new();
        if let Some(base) = self.other_base {
            let _ = writeln!(
                s,
                "**This pull request's merge base is `{}`, not the reviewed `{}`: the review covers another range, and the pull request's changes outside it were not reviewed.**\n",
                short_sha(base),
                short_sha(&report.merge_base)
            );
        }
        if !self.uncovered.is_empty() {
            s.push_str(&uncovered_paragraph(report, self.uncovered));
        }
        if !self.base_known {
            s.push_str("**The forge did not say this pull request's merge base, so whether the review covers its range could not be checked.**\n\n");
        }
        if !self.listed_all {
            s.push_str("**The forge listed only part of this pull request's files, so whether the review covers all of them could not be checked.**\n\n");
        }
        if let Some(head) = self.stale_head {
            let _ = writeln!(
                s,
                "**The pull request's head is now `{}`, not the reviewed `{}`: the commits after it were not reviewed.** Findings are listed here instead of on lines.\n",
                short_sha(head),
                short_sha(&report.head.sha)
            );
        }
        s
    }
}

/// The first 12 characters of a commit id, as the summary shows it.
fn short_sha(sha: &str) -> String {
    sha.chars().take(12).collect()
}

/// Most uncovered files a summary names.
const MAX_UNCOVERED_NAMED: usize = 20;

/// The paragraph naming the pull request's files outside the reviewed range.
fn uncovered_paragraph(report: &ReviewReport, uncovered: &[String]) -> String {
    let short = short_sha;
    let mut names: Vec<String> = uncovered
        .iter()
        .take(MAX_UNCOVERED_NAMED)
        .map(|p| code(p))
        .collect();
    if uncovered.len() > MAX_UNCOVERED_NAMED {
        names.push(format!(
            "and {} more",
            uncovered.len() - MAX_UNCOVERED_NAMED
        ));
    }
    format!(
        "**This pull request changes {} file(s) outside the reviewed range `{}..{}`, which were not reviewed:** {}.\n",
        uncovered.len(),
        short(&report.merge_base),
        short(&report.head.sha),
        names.join(", ")
    )
}

fn summary_body(
    report: &ReviewReport,
    inline: usize,
    outside: &[&Finding],
    scope: Scope<'_>,
) -> String {
    let short = short_sha;
    let reviewed = scope.heading(report);
    let mut s = format!(
        "{SUMMARY_MARKER}\n{HEAD_MARKER_PREFIX}{} -->\n## vouch review{reviewed}: {}\n\n",
        report.head.sha,
        heading(report)
    );
    let _ = writeln!(
        s,
        "{}\n\nRange `{}..{}`: {} of {} changed file(s) reviewed, +{} −{}.\n",
        text(&report.summary),
        short(&report.merge_base),
        short(&report.head.sha),
        report.files_reviewed.len(),
        report.counts.files,
        report.counts.additions,
        report.counts.deletions
    );
    if matches!(
        report.opinion.outcome,
        Outcome::Incomplete | Outcome::Aborted
    ) {
        s.push_str(&why_incomplete(report));
    }
    if !report.opinion.not_clean_because.is_empty() && report.opinion.outcome == Outcome::NoFindings
    {
        let _ = writeln!(
            s,
            "Not a clean opinion because: {}.\n",
            text(&report.opinion.not_clean_because.join("; "))
        );
    }
    s.push_str(&scope.paragraphs(report));
    if inline > 0 {
        let _ = writeln!(s, "{inline} finding(s) are commented on their lines.\n");
    }
    s.push_str(&outside_the_diff(outside));
    let full = full_report(report, s.chars().count());
    s.push_str(&full);
    cap(&mut s, "\n\n*(cut at the comment size limit)*");
    s
}

/// Why a review that did not complete published nothing: its failures and messages, or
/// a cancellation.
fn why_incomplete(report: &ReviewReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "**The review did not complete, so no finding is published.** Why:\n"
    );
    for f in &report.failures {
        let stage = f
            .stage
            .as_deref()
            .map(|l| format!(" ({})", text(l)))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "- {}{stage}: {}",
            text(&kebab(&f.kind)),
            text(&f.message)
        );
    }
    for m in &report.messages {
        let _ = writeln!(s, "- {}", text(m));
    }
    if report.failures.is_empty() && report.messages.is_empty() {
        let _ = writeln!(s, "- the review was cancelled before it finished");
    }
    s.push('\n');
    s
}

/// The findings listed in the summary because no line of the diff can carry them
/// (nothing when there are none).
fn outside_the_diff(outside: &[&Finding]) -> String {
    let mut s = String::new();
    if outside.is_empty() {
        return s;
    }
    let _ = writeln!(s, "### Findings outside the diff\n");
    for f in outside {
        let _ = writeln!(
            s,
            "- **{} {}** {}: {} (citations: {})",
            f.severity.as_str(),
            text(f.area.as_str()),
            lines(f),
            text(&f.claim),
            citations(f)
        );
    }
    s.push('\n');
    s
}

/// The full report under a summary of `used` characters, cut at whole items by the
/// report's own Markdown renderer so the comment stays within the forge's limit.
fn full_report(report: &ReviewReport, used: usize) -> String {
    let wrapper = "<details><summary>Full report</summary>\n\n\n</details>\n";
    let room = COMMENT_CAP.saturating_sub(used + wrapper.chars().count());
    let full = render_markdown_with(
        report,
        &MarkdownOptions {
            marker: None,
            max_chars: Some(room),
            full_report: Some(
                "the JSON report this comment was published from (`vouch publish REPORT.json`)"
                    .into(),
            ),
        },
    );
    format!("<details><summary>Full report</summary>\n\n{full}\n</details>\n")
}

/// Cuts `s` to [`COMMENT_CAP`] characters, ending with `note`.
fn cap(s: &mut String, note: &str) {
    if s.chars().count() > COMMENT_CAP {
        let keep = COMMENT_CAP - note.chars().count();
        *s = s.chars().take(keep).collect::<String>() + note;
    }
}

fn kebab<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Untrusted text as inline Markdown that renders literally, mentions and issue
/// references included ([`vouch_report::escape_inline`]).
pub fn text(raw: &str) -> String {
    vouch_report::escape_inline(raw)
}

/// Untrusted text as a code span fenced by more backticks than any run inside it.
pub fn code(raw: &str) -> String {
    let visible: String = raw
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if visible.trim().is_empty() {
        return "` `".to_string();
    }
    let run = visible.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(run + 1);
    let pad = if visible.starts_with('`') || visible.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{visible}{pad}{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_states_its_head_only_on_its_second_line() {
        let head = "0ecf24a9777e89b5d2b9fdf98090da5b540fbbba";
        // (body, is a summary, head stated)
        let cases = [
            (
                format!("{SUMMARY_MARKER}\n{HEAD_MARKER_PREFIX}{head} -->\n## x"),
                true,
                Some(head),
            ),
            (format!("{SUMMARY_MARKER}\n## x"), true, None),
            (
                format!("> {SUMMARY_MARKER}\n{HEAD_MARKER_PREFIX}{head} -->"),
                false,
                None,
            ),
            (
                format!("{SUMMARY_MARKER}\ntext {HEAD_MARKER_PREFIX}{head} -->"),
                true,
                None,
            ),
            (
                format!("{SUMMARY_MARKER}\n{HEAD_MARKER_PREFIX}not-a-sha -->"),
                true,
                None,
            ),
        ];
        for (body, summary, stated) in &cases {
            assert_eq!(is_summary(body), *summary, "{body}");
            assert_eq!(summary_head(body), *stated, "{body}");
        }
    }
    use proptest::prelude::*;

    #[test]
    fn marker_round_trips_and_refuses_lookalikes() {
        assert_eq!(
            marker_key(&format!("x {} y", finding_marker("0123456789abcdef"))).as_deref(),
            Some("0123456789abcdef")
        );
        for body in [
            "<!-- vouch:finding:xyz -->",
            "<!-- vouch:finding:0123456789abcdef",
            "plain",
            "<!-- vouch:finding:0123456789abcdef0 -->",
        ] {
            assert_eq!(marker_key(body), None, "{body}");
        }
    }

    proptest! {
        /// Escaped text never contains an unescaped character that opens Markdown or HTML,
        /// never breaks the line, and the marker never leaks from untrusted text.
        #[test]
        fn escaped_text_is_inert(raw in "\\PC{0,60}|[<>!\\-`*_\\[\\]#@\n\r]{0,30}") {
            let t = text(&raw);
            prop_assert!(!t.contains('\n') && !t.contains('\r'));
            prop_assert!(!t.contains("<!--"));
            let mut prev_backslash = false;
            for c in t.chars() {
                if "`*_[]<>|!~&#@".contains(c) {
                    prop_assert!(prev_backslash, "unescaped {c:?} in {t:?}");
                }
                prev_backslash = c == '\\' && !prev_backslash;
            }
        }

        /// A code span is never closed early by backticks inside it.
        #[test]
        fn code_span_fence_is_longer_than_any_run(raw in "[a-z`]{1,20}") {
            prop_assume!(raw.chars().any(|c| c != '`'));
            let c = code(&raw);
            let fence = c.chars().take_while(|&ch| ch == '`').count();
            let inner = &c[fence..c.len() - fence];
            let longest = inner.split(|ch| ch != '`').map(str::len).max().unwrap_or(0);
            prop_assert!(longest < fence);
        }
    }
}
