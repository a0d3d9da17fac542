//! Markdown rendering of a review report, for people and for pull-request comments.
//!
//! For a comment ([`MarkdownOptions::comment`]) the document starts with a hidden marker
//! that identifies the one sticky comment to update, and is cut to fit a character cap
//! at whole items, with a note of what was cut and where the full report is. Long lists
//! are collapsible; untrusted text renders literally, and what it quotes in backticks
//! renders as code.

use std::fmt::Write;

use vouch_core::{Outcome, StageRecord, StageStatus};

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

/// Untrusted text (paths, model output, labels, messages) as inline Markdown that renders
/// literally: line breaks become spaces (so it never starts a line: callers put it after
/// a label or list marker) and every character CommonMark gives inline meaning is
/// backslash-escaped, so no heading, link, image, HTML or table cell can be injected.
/// What the text quotes between a pair of backticks renders as a code span ([`code`]).
fn text(raw: &str) -> String {
    let parts: Vec<&str> = raw.split('`').collect();
    // Segments at odd positions lie between a pair of backticks; an unpaired last
    // backtick stays literal text.
    let paired = if parts.len().is_multiple_of(2) {
        parts.len() - 1
    } else {
        parts.len()
    };
    let mut out = String::with_capacity(raw.len());
    for (i, part) in parts.iter().enumerate() {
        if i >= paired {
            out.push_str("\\`");
            out.push_str(&escape_inline(part));
        } else if i % 2 == 1 && !part.is_empty() {
            out.push_str(&code(part));
        } else if i % 2 == 1 {
            out.push_str("\\`\\`");
        } else {
            out.push_str(&escape_inline(part));
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

/// Plain untrusted text on one line with every inline-significant character escaped:
/// CommonMark's, forge HTML's, and the forges' own references (`@` mentions a user or a
/// team, `#` links an issue), so text a model wrote can neither inject markup nor notify
/// anyone where the report is posted. The one escaper of the Markdown report and of the
/// comments `vouch publish` posts.
pub fn escape_inline(raw: &str) -> String {
    escape(raw, false)
}

/// [`escape_inline`], keeping a web address a link (`links`): for text vouch's operator
/// gave, such as where the full report is.
fn escape(raw: &str, links: bool) -> String {
    let mut out = String::with_capacity(raw.len());
    for (at, c) in raw.char_indices() {
        match c {
            // A web address would be turned into a live link by GitHub's and GitLab's
            // autolinking: escaping the `:` of `://` and the `.` of a leading `www.`
            // keeps it text (it renders the same).
            ':' if !links && raw[at..].starts_with("://") => out.push_str("\\:"),
            '.' if !links && starts_www(raw, at) => out.push_str("\\."),
            // An e-mail address becomes a `mailto:` link whatever is escaped; a zero-width
            // space after its `@` keeps it text (and a mention from notifying anyone).
            '@' if !links => out.push_str("\\@\u{200B}"),
            '\n' | '\r' | '\t' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '!' | '~' | '&' | '#' | '@' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Whether the `.` at byte `at` of `raw` ends a `www` that starts a word (any case).
fn starts_www(raw: &str, at: usize) -> bool {
    let Some(start) = at.checked_sub(3) else {
        return false;
    };
    // `get` refuses a range that is not on character boundaries: no `www` there.
    if !raw
        .get(start..at)
        .is_some_and(|w| w.eq_ignore_ascii_case("www"))
    {
        return false;
    }
    raw[..start]
        .chars()
        .next_back()
        .is_none_or(|c| !c.is_alphanumeric())
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

/// The character cap of a pull-request comment: GitHub stops at 65,536, so 60,000 leaves
/// room for what a forge adds.
pub const COMMENT_MAX_CHARS: usize = 60_000;

/// The head of the stages table.
const STAGES_TABLE_HEAD: &str = "| stage | model | status | complete | missing | unexpected | retried | repaired | candidates | requests |\n|---|---|---|---|---|---|---|---|---|---|\n";

/// Lists longer than this are collapsible (`<details>`).
const COLLAPSE_AFTER: usize = 10;

/// Untrusted fields are clipped to this many characters in a capped document, so one
/// item can never take the whole budget.
const CLIP_CHARS: usize = 4_000;

/// How [`render_markdown_with`] shapes the document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MarkdownOptions {
    /// A key for the hidden marker on the first line ([`comment_marker`]), so a
    /// publisher finds its one sticky comment again. `None`: no marker.
    pub marker: Option<String>,
    /// The most characters the document may have; longer documents are cut at whole
    /// items, with a note. `None`: no cap.
    pub max_chars: Option<usize>,
    /// Where the full report is (a URL or a few words), named in the cut note.
    pub full_report: Option<String>,
}

impl MarkdownOptions {
    /// A pull-request comment: marker `summary`, cap [`COMMENT_MAX_CHARS`].
    pub fn comment() -> Self {
        MarkdownOptions {
            marker: Some("summary".into()),
            max_chars: Some(COMMENT_MAX_CHARS),
            full_report: None,
        }
    }
}

/// The hidden marker line for `key`: an HTML comment that renders as nothing, in the form
/// vouch-forge's comments use (`comment_marker("summary")` is its summary marker). Characters
/// outside `[A-Za-z0-9._:/-]` in the key become `-`, so it can never close the comment.
pub fn comment_marker(key: &str) -> String {
    let key: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._:/".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    let key = key.trim_matches('-');
    format!("<!-- vouch:{key} -->")
}

/// One part of the document: a heading and items, cut at whole items.
struct Section {
    /// What the cut note calls its items ("findings").
    name: &'static str,
    heading: String,
    items: Vec<String>,
    /// Wrapped in `<details>` when it has more than [`COLLAPSE_AFTER`] items.
    collapsible: bool,
    /// Text after the items (a table's end, say).
    footer: String,
}

impl Section {
    fn new(name: &'static str, heading: impl Into<String>) -> Self {
        Section {
            name,
            heading: heading.into(),
            items: Vec::new(),
            collapsible: false,
            footer: String::new(),
        }
    }

    fn open(&self, shown: usize) -> String {
        if self.collapsible && self.items.len() > COLLAPSE_AFTER {
            format!(
                "{}<details><summary>{} {}</summary>\n\n",
                self.heading, shown, self.name
            )
        } else {
            self.heading.clone()
        }
    }

    fn close(&self) -> String {
        if self.collapsible && self.items.len() > COLLAPSE_AFTER {
            format!("{}\n</details>\n\n", self.footer)
        } else {
            self.footer.clone()
        }
    }
}

struct Renderer {
    clip: Option<usize>,
}

impl Renderer {
    fn raw<'a>(&self, raw: &'a str) -> std::borrow::Cow<'a, str> {
        match self.clip {
            Some(n) if raw.chars().count() > n => {
                let kept: String = raw.chars().take(n).collect();
                format!("{kept} … (cut: {} characters)", raw.chars().count() - n).into()
            }
            _ => raw.into(),
        }
    }

    fn text(&self, raw: &str) -> String {
        text(&self.raw(raw))
    }

    fn block(&self, raw: &str) -> String {
        block(&self.raw(raw))
    }

    fn code(&self, raw: &str) -> String {
        code(&self.raw(raw))
    }

    fn head(&self, report: &ReviewReport) -> String {
        let mut s = String::new();
        let short = |sha: &str| sha.chars().take(12).collect::<String>();
        let _ = writeln!(s, "# vouch review: {}\n", outcome_heading(report));
        let repository = report.remote_url.as_deref().unwrap_or(&report.repository);
        let _ = writeln!(
            s,
            "{} → {} (merge base `{}`) in {}, composition {}: {} file(s), {} hunk(s), +{} −{}.\n",
            self.code(&report.base.spec),
            self.code(&report.head.spec),
            short(&report.merge_base),
            self.code(repository),
            self.code(&report.composition),
            report.counts.files,
            report.counts.hunks,
            report.counts.additions,
            report.counts.deletions
        );
        let _ = writeln!(s, "Summary: {}\n", self.text(&report.summary));
        if !report.opinion.not_clean_because.is_empty()
            && report.opinion.outcome != Outcome::NothingToReview
        {
            let _ = writeln!(
                s,
                "Not a clean opinion because: {}.\n",
                self.text(&report.opinion.not_clean_because.join("; "))
            );
        }
        s
    }

    fn finding(&self, i: usize, f: &vouch_core::Finding, report: &ReviewReport) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "### {}. \\[{}\\] {}:{}-{} at {} ({})\n\nClaim: {}\n\nEvidence: {}\n",
            i + 1,
            f.severity.as_str(),
            self.code(&f.path),
            f.start_line,
            f.end_line,
            f.revision.as_str(),
            self.text(f.area.as_str()),
            self.text(&f.claim),
            self.text(&f.evidence)
        );
        s.push_str(&self.claims_beside(f, report));
        let citations: Vec<String> = f
            .citations
            .iter()
            .map(|c| {
                format!(
                    "- {}:{}-{} at {}\n",
                    self.code(&c.path),
                    c.start_line,
                    c.end_line,
                    c.revision.as_str()
                )
            })
            .collect();
        if citations.len() > 5 {
            let _ = write!(
                s,
                "<details><summary>{} citations</summary>\n\n{}\n</details>\n",
                citations.len(),
                citations.concat()
            );
        } else {
            let _ = write!(s, "Citations:\n{}", citations.concat());
        }
        let p = &f.provenance;
        let _ = writeln!(
            s,
            "\nProposed by {}; verified by {} in {} pass(es).\n",
            self.text(&p.proposed_by.join(", ")),
            self.text(&p.verified_by),
            p.verification_passes
        );
        s
    }

    /// The other verified claims merged into `f`, and each claim its candidates were
    /// proposed with when the verifier worded the finding otherwise: a reader sees every
    /// verified claim and what each lane actually proposed.
    fn claims_beside(&self, f: &vouch_core::Finding, report: &ReviewReport) -> String {
        let mut s = String::new();
        for a in &f.also_verified {
            let _ = writeln!(
                s,
                "Also verified here: \\[{}\\] lines {}-{}: {}\n",
                a.severity.as_str(),
                a.start_line,
                a.end_line,
                self.text(&a.claim)
            );
        }
        for c in report
            .candidates
            .iter()
            .filter(|c| f.provenance.candidate_ids.contains(&c.candidate.id))
            .filter(|c| c.candidate.claim != f.claim)
            .filter(|c| !f.also_verified.iter().any(|a| a.claim == c.candidate.claim))
        {
            let _ = writeln!(
                s,
                "Proposed by {} as: {}\n",
                self.text(&c.candidate.proposed_by),
                self.text(&c.candidate.claim)
            );
        }
        s
    }

    fn sections(&self, report: &ReviewReport) -> Vec<Section> {
        vec![
            self.messages(report),
            self.failures(report),
            self.findings(report),
            self.limitations(report),
            self.files(report),
            self.stages(report),
            self.candidates(report),
            self.observations(report),
        ]
    }

    /// The messages section: each message as a quoted block.
    fn messages(&self, report: &ReviewReport) -> Section {
        let mut messages = Section::new("messages", "## Messages\n\n");
        messages.items = report
            .messages
            .iter()
            .map(|m| format!("{}\n\n", self.block(m)))
            .collect();
        messages
    }

    /// The failures section: each failure's kind, stage and message.
    fn failures(&self, report: &ReviewReport) -> Section {
        let mut failures = Section::new("failures", "## Failures\n\n");
        failures.items = report
            .failures
            .iter()
            .map(|f| {
                let stage = f
                    .stage
                    .as_deref()
                    .map(|l| format!(" ({})", self.text(l)))
                    .unwrap_or_default();
                format!(
                    "- {}{stage}:\n\n{}\n\n",
                    f.kind.as_str(),
                    self.block(&f.message)
                )
            })
            .collect();
        failures
    }

    /// The findings section, each finding numbered.
    fn findings(&self, report: &ReviewReport) -> Section {
        let mut findings = Section::new("findings", "## Findings\n\n");
        findings.items = report
            .findings
            .iter()
            .enumerate()
            .map(|(i, f)| self.finding(i, f, report))
            .collect();
        findings
    }

    /// The coverage limitations section (collapsible): each limitation, then each
    /// excluded file with its reason.
    fn limitations(&self, report: &ReviewReport) -> Section {
        let mut limitations = Section::new("coverage limitations", "## Coverage limitations\n\n");
        limitations.collapsible = true;
        limitations.footer = "\n".into();
        limitations.items = report
            .limitations
            .iter()
            .map(|l| {
                let stage = l
                    .stage
                    .as_deref()
                    .map(|l| format!(" ({})", self.text(l)))
                    .unwrap_or_default();
                format!("- {}{stage}: {}\n", l.kind.as_str(), self.text(&l.detail))
            })
            .chain(report.excluded_files.iter().map(|e| {
                format!(
                    "- excluded {}: {}\n",
                    self.code(&e.path),
                    self.text(&e.reason)
                )
            }))
            .collect();
        limitations
    }

    /// The stages table (collapsible; its header moves inside the fold when it folds).
    fn stages(&self, report: &ReviewReport) -> Section {
        let mut stages = Section::new("stages", format!("## Stages\n\n{STAGES_TABLE_HEAD}"));
        stages.collapsible = true;
        stages.footer = "\n".into();
        stages.items = report.stages.iter().map(|st| self.stage_row(st)).collect();
        if stages.items.len() > COLLAPSE_AFTER {
            // A table inside <details> needs its header after the summary line.
            stages.heading = "## Stages\n\n".into();
            stages.items.insert(0, STAGES_TABLE_HEAD.into());
        }
        stages
    }

    /// The candidates section (collapsible): each candidate and its decision.
    fn candidates(&self, report: &ReviewReport) -> Section {
        let mut candidates = Section::new("candidates", "## Candidates and decisions\n\n");
        candidates.collapsible = true;
        candidates.footer = "\n".into();
        candidates.items = report
            .candidates
            .iter()
            .map(|c| self.candidate(c))
            .collect();
        candidates
    }

    /// The observations section (collapsible).
    fn observations(&self, report: &ReviewReport) -> Section {
        let mut observations = Section::new("observations", "## Observations\n\n");
        observations.collapsible = true;
        observations.footer = "\n".into();
        observations.items = report
            .observations
            .iter()
            .map(|o| format!("- {}\n", self.text(o)))
            .collect();
        observations
    }

    /// The files section: how many changed files were reviewed (in an accepted receipt
    /// and seen in full), and every other changed file by name with its reason. A list
    /// longer than [`COLLAPSE_AFTER`] shows its first entries and "and N more", then a
    /// collapsible block that lists them all.
    fn files(&self, report: &ReviewReport) -> Section {
        let mut section = Section::new("files not reviewed", "## Files\n\n");
        let changed = report.files_reviewed.len() + report.files_not_reviewed.len();
        if changed == 0 {
            return section;
        }
        let count = format!(
            "Reviewed {} of {changed} changed file(s) (listed in an accepted coverage receipt and seen in full).\n\n",
            report.files_reviewed.len()
        );
        let all = &report.files_not_reviewed;
        let lines: Vec<String> = all
            .iter()
            .map(|f| {
                format!(
                    "- {} ({}): {}\n",
                    self.code(&f.path),
                    f.reason.as_str(),
                    self.text(&f.detail)
                )
            })
            .collect();
        if all.is_empty() {
            section.items = vec![count];
        } else if all.len() <= COLLAPSE_AFTER {
            section.heading = format!("## Files\n\n{count}Not reviewed:\n\n");
            section.items = lines;
            section.footer = "\n".into();
        } else {
            section.heading = format!(
                "## Files\n\n{count}Not reviewed:\n\n{}- and {} more\n\n<details><summary>All {} changed files not reviewed</summary>\n\n",
                lines[..COLLAPSE_AFTER].concat(),
                all.len() - COLLAPSE_AFTER,
                all.len()
            );
            section.items = lines;
            section.footer = "\n</details>\n\n".into();
        }
        section
    }

    fn stage_row(&self, st: &vouch_core::StageRecord) -> String {
        let (complete, missing, unexpected) = match &st.coverage {
            Some(c) => (
                c.complete.to_string(),
                c.missing_files.len().to_string(),
                c.unexpected_files.len().to_string(),
            ),
            None => ("–".into(), "–".into(), "–".into()),
        };
        let status = match st.status {
            StageStatus::Accepted => "accepted".to_string(),
            StageStatus::Limited => "limited".into(),
            StageStatus::Failed => "failed".into(),
            StageStatus::Cancelled => "cancelled".into(),
            // Why it did not run ("not started: … failed"), which nothing else states.
            StageStatus::Skipped => match &st.problem {
                Some(why) => format!("skipped ({})", escape_inline(&self.raw(why))),
                None => "skipped".into(),
            },
        };
        format!(
            "| {} | {} | {status} | {complete} | {missing} | {unexpected} | {} | {} | {} | {} |\n",
            escape_inline(&self.raw(&st.label)),
            self.model_cell(st),
            if st.retried { "yes" } else { "no" },
            if st.repaired { "yes" } else { "no" },
            st.candidates,
            st.usage.requests
        )
    }

    /// The model asked for, and when the endpoint named others, the models that answered
    /// (`gpt-4o → gpt-4o-2024-08-06`).
    fn model_cell(&self, st: &StageRecord) -> String {
        let Some(asked) = st.model.as_deref() else {
            return "–".into();
        };
        let asked_text = escape_inline(&self.raw(asked));
        if st.answered_by.iter().all(|m| m == asked) {
            return asked_text;
        }
        let answered: Vec<String> = st
            .answered_by
            .iter()
            .map(|m| escape_inline(&self.raw(m)))
            .collect();
        format!("{asked_text} → {}", answered.join(", "))
    }

    fn candidate(&self, c: &vouch_core::CandidateRecord) -> String {
        let verdict = c
            .verdict
            .map(|v| v.as_str().to_string())
            .unwrap_or_else(|| "no valid decision".into());
        format!(
            "- {} {}:{}-{} — {} → **{verdict}**{}\n",
            self.code(&c.candidate.id),
            self.code(&c.candidate.path),
            c.candidate.start_line,
            c.candidate.end_line,
            self.text(&c.candidate.claim),
            c.problem
                .as_deref()
                .map(|p| format!(" ({})", self.text(p)))
                .unwrap_or_default()
        )
    }
}

fn usage_line(report: &ReviewReport) -> String {
    let u = &report.usage;
    let mut line = format!(
        "Model usage: {} request(s), {} prompt and {} completion token(s)",
        u.requests, u.prompt_tokens, u.completion_tokens
    );
    if u.unreported_replies > 0 {
        line.push_str(&format!(
            " as the endpoint reported them; {} repl(ies) reported no token counts, \
             estimated by vouch at {} token(s) (counted against token budgets)",
            u.unreported_replies, u.estimated_tokens
        ));
    }
    line.push_str(".\n");
    line
}

/// Renders the report as Markdown: opinion, messages, failures, findings with citations
/// and provenance, limitations, per-stage coverage, candidates and their decisions.
pub fn render_markdown(report: &ReviewReport) -> String {
    render_markdown_with(report, &MarkdownOptions::default())
}

/// Renders the report as Markdown shaped by `options`: the hidden marker first; then,
/// when the whole document would exceed `max_chars`, sections are kept in order and cut
/// at whole items (the heading, summary and opinion always stay), with a closing note
/// naming what was cut and where the full report is. Lists of more than ten items are
/// collapsible. The result never exceeds `max_chars` characters (a cap too small for the
/// heading and the note gives just those, cut).
pub fn render_markdown_with(report: &ReviewReport, options: &MarkdownOptions) -> String {
    let renderer = Renderer {
        clip: options.max_chars.map(|_| CLIP_CHARS),
    };
    let mut out = String::new();
    if let Some(key) = &options.marker {
        out.push_str(&comment_marker(key));
        out.push('\n');
    }
    out.push_str(&renderer.head(report));
    let sections = renderer.sections(report);
    let usage = usage_line(report);
    let limit = options.max_chars.unwrap_or(usize::MAX);
    let where_full = options
        .full_report
        .as_deref()
        .map(|w| w.chars().take(2_000).collect::<String>());
    // Room kept for the cut note and the usage line.
    let reserve = 600 + where_full.as_deref().map_or(0, |w| w.chars().count() * 2);
    let budget = limit.saturating_sub(reserve);
    let mut used = out.chars().count();
    let mut cut: Vec<String> = Vec::new();
    for section in sections.iter().filter(|s| !s.items.is_empty()) {
        let fixed =
            section.open(section.items.len()).chars().count() + section.close().chars().count();
        let mut shown = 0;
        let mut room = budget.saturating_sub(used + fixed);
        for item in &section.items {
            let n = item.chars().count();
            if n > room {
                break;
            }
            room -= n;
            shown += 1;
        }
        if shown > 0 {
            let body: String = section.items[..shown].concat();
            let text = format!("{}{body}{}", section.open(shown), section.close());
            used += text.chars().count();
            out.push_str(&text);
        }
        if shown < section.items.len() {
            cut.push(format!(
                "{} of {} {}",
                section.items.len() - shown,
                section.items.len(),
                section.name
            ));
        }
    }
    out.push_str(&usage);
    if !cut.is_empty() {
        let full = match &where_full {
            Some(w) => format!("The full report: {}.", escape(w, true)),
            None => "The full report is in vouch's JSON output (`--format json`).".into(),
        };
        let _ = write!(
            out,
            "\n_This report was cut to fit {limit} characters: not shown are {}. {full}_\n",
            cut.join(", ")
        );
    }
    if out.chars().count() > limit {
        out = out.chars().take(limit).collect();
    }
    out
}

/// The Markdown of a run that ended before it had a report: what happened and the error.
pub fn render_markdown_failure(failure: &crate::failure::RunFailure) -> String {
    format!(
        "# vouch review: Failed, nothing reviewed\n\n{}\n\n{}\n",
        text(&failure.summary()),
        block(&failure.message)
    )
}
