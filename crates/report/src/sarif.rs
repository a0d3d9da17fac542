//! SARIF 2.1.0 rendering (OASIS SARIF v2.1.0, `sarif-schema-2.1.0.json`) for GitHub code
//! scanning and other SARIF consumers.
//!
//! Only a completed review carries `results`: an incomplete, aborted or failed run omits
//! them (SARIF §3.14.23: absent `results` means the tool could not determine them) and
//! says `executionSuccessful: false`, so it can never be read as "no alerts".

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use vouch_core::{Area, Outcome, Revision, Severity, SourceWindow};

use crate::failure::RunFailure;
use crate::model::ReviewReport;
use crate::notice::{NoticeKind, OutcomeNotice, outcome_notice};

/// The `uriBaseId` every location is relative to: the reviewed repository's root.
pub const SRCROOT: &str = "SRCROOT";

/// The key of vouch's entry in `partialFingerprints`.
pub const FINGERPRINT_KEY: &str = "vouchFinding/v1";

/// A repository-relative path as a SARIF `uri-reference` (RFC 3986): each byte outside
/// the unreserved set and `/` is percent-encoded, so spaces, unicode, quotes and control
/// characters in file names stay valid URIs (SARIF §3.10, `artifactLocation.uri`).
pub fn path_uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// SARIF `result.level` for a severity (§3.27.10: `error`, `warning`, `note`).
fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "note",
    }
}

/// One review area as a SARIF rule: short description, full description, help.
struct AreaRule {
    short: &'static str,
    full: &'static str,
    help: &'static str,
}

const HELP_TAIL: &str = "Every vouch finding was proposed by a specialist and then \
proven by an independent verifier from repository source it read; the citations (related \
locations) are the lines that proof rests on. Read them, fix the code, and re-run the review.";

/// The SARIF rule text of each review area. Exhaustive: every area has its rule, and a
/// finding's area is always one of them (a reply naming another area is a contract
/// violation, repaired or failed before anything reaches a report).
fn area_rule(area: Area) -> AreaRule {
    match area {
        Area::Correctness => AreaRule {
            short: "Incorrect behaviour",
            full: "The change computes a wrong result, takes a wrong branch or breaks a case it used to handle.",
            help: "A realistic input reaches changed code that produces a wrong outcome.",
        },
        Area::Contracts => AreaRule {
            short: "Broken contract",
            full: "The change breaks what callers, callees or persisted data rely on: signatures, invariants, error values or documented behaviour.",
            help: "A caller or consumer of the changed code now gets something it does not expect.",
        },
        Area::FailurePaths => AreaRule {
            short: "Mishandled failure path",
            full: "An error, timeout or partial result in the changed code is lost, misreported or leaves state inconsistent.",
            help: "Follow the error path the citations show: it does not end in a correct state.",
        },
        Area::Concurrency => AreaRule {
            short: "Concurrency defect",
            full: "The change introduces a race, a deadlock, lost updates or ordering the code does not guarantee.",
            help: "Two executions the code allows interleave so that the outcome is wrong.",
        },
        Area::Security => AreaRule {
            short: "Security defect",
            full: "The change lets untrusted input reach a sensitive operation, leaks secrets or weakens a check.",
            help: "Untrusted data reaches the cited operation without the check it needs.",
        },
        Area::Resources => AreaRule {
            short: "Resource or data defect",
            full: "The change leaks handles or memory, grows without bound, or changes the meaning, units or encoding of persisted data.",
            help: "The cited resource or data is not released, bounded or kept compatible.",
        },
        Area::Operations => AreaRule {
            short: "Deployment or operations defect",
            full: "The change breaks configuration defaults, migrations, mixed-version operation or what operators observe.",
            help: "Deploying or running the change as the repository does would fail as cited.",
        },
        Area::Validation => AreaRule {
            short: "Test does not validate the change",
            full: "A changed test cannot fail, does not assert the changed behaviour, or a check was removed or weakened.",
            help: "The cited test would pass even if the behaviour it names were broken.",
        },
        Area::Conventions => AreaRule {
            short: "Repository convention broken",
            full: "The change departs from a written repository policy or from a pattern with at least three consistent examples, all cited.",
            help: "The cited policy or examples show the convention the change does not follow.",
        },
    }
}

/// A rule id's last segment in Pascal case (`failure-paths` is `FailurePaths`): rules'
/// friendly `name`s are one Pascal-case identifier each, as SARIF tools read them.
fn rule_name(id: &str) -> String {
    let last = id.rsplit('/').next().unwrap_or(id);
    last.split(['-', '_', '.'])
        .flat_map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase())
                .into_iter()
                .chain(chars)
        })
        .collect()
}

fn rule(area: Area) -> Value {
    let AreaRule { short, full, help } = area_rule(area);
    let id = area.as_str();
    let help_text = format!("{help} {HELP_TAIL}");
    json!({
        "id": id,
        // Differs from the id beyond case, as SARIF asks of a name (SARIF1001).
        "name": format!("{}Finding", rule_name(id)),
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": help_text, "markdown": help_text},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"tags": ["vouch", id]}
    })
}

/// A finding's `ruleIndex`: the rules are every review area in [`Area::ALL`] order, so
/// the index is stable across runs.
fn rule_index(area: Area) -> usize {
    Area::ALL
        .iter()
        .position(|a| *a == area)
        .expect("Area::ALL lists every area")
}

/// A finding's fingerprint, stable across re-runs and unrelated edits: the SHA-256 of
/// its review area, path, revision and claim (lowercased, words of letters and digits
/// only) — never its line numbers, which move when unrelated lines change.
pub fn fingerprint(area: &str, path: &str, revision: Revision, claim: &str) -> String {
    let words: Vec<String> = claim
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut hasher = Sha256::new();
    for part in [area, path, revision.as_str(), &words.join(" ")] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn physical(path: &str, lines: Option<(u32, u32)>) -> Value {
    let mut location = json!({"artifactLocation": {"uri": path_uri(path), "uriBaseId": SRCROOT}});
    if let Some((start, end)) = lines {
        location["region"] = json!({"startLine": start, "endLine": end});
    }
    location
}

fn related(id: usize, window: &SourceWindow, what: &str, merge_base: &str) -> Value {
    let side = match window.revision {
        Revision::Head => "at head".to_string(),
        Revision::Base => format!(
            "at the merge base {} (old side of the change)",
            merge_base.chars().take(12).collect::<String>()
        ),
    };
    json!({
        "id": id,
        "message": {"text": format!("{what}: lines {}-{} {side}", window.start_line, window.end_line)},
        "physicalLocation": physical(&window.path, Some((window.start_line, window.end_line))),
        "properties": {"revision": window.revision.as_str()}
    })
}

fn result(report: &ReviewReport, f: &vouch_core::Finding) -> Value {
    let mut related_locations = Vec::new();
    let (location, message) = match f.revision {
        Revision::Head => (
            physical(&f.path, Some((f.start_line, f.end_line))),
            f.message(),
        ),
        // Lines of the old side never land on head lines with the same numbers: the
        // result is file-level, its base lines a related location.
        Revision::Base => {
            let base = SourceWindow {
                revision: Revision::Base,
                path: f.path.clone(),
                start_line: f.start_line,
                end_line: f.end_line,
            };
            related_locations.push(related(
                0,
                &base,
                "the finding's removed lines",
                &report.merge_base,
            ));
            (
                physical(&f.path, None),
                format!(
                    "{} (about removed lines {}-{} of the old side; see the related location)",
                    f.message(),
                    f.start_line,
                    f.end_line
                ),
            )
        }
    };
    for c in &f.citations {
        let id = related_locations.len();
        related_locations.push(related(id, c, "citation", &report.merge_base));
    }
    json!({
        "ruleId": f.area.as_str(),
        "ruleIndex": rule_index(f.area),
        "level": level(f.severity),
        "message": {"text": message},
        "locations": [{"physicalLocation": location}],
        "relatedLocations": related_locations,
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(f.area.as_str(), &f.path, f.revision, &f.claim)},
        "properties": {
            "severity": f.severity.as_str(),
            "revision": f.revision.as_str(),
            "evidence": f.evidence,
            "proposedBy": f.provenance.proposed_by,
            "verifiedBy": f.provenance.verified_by,
            "verificationPasses": f.provenance.verification_passes
        }
    })
}

/// `automationDetails.id`: `vouch/COMPOSITION/HEAD`. Code scanning takes the part before
/// the last `/` as the category, so every run of one composition replaces its alerts.
fn automation_id(report: &ReviewReport) -> String {
    let composition: String = report
        .composition
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("vouch/{composition}/{}", report.head.sha)
}

fn driver(version: &str, rules: &[Area]) -> Value {
    json!({
        "name": "vouch",
        "version": version,
        "rules": rules.iter().map(|a| rule(*a)).collect::<Vec<_>>()
    })
}

/// The rule of the limited-coverage result, after every area's rule.
fn coverage_rule() -> Value {
    notice_rule(
        NoticeKind::LimitedCoverage,
        "Limited coverage: not every changed file was reviewed",
        "vouch could not review every changed file in full (the result names why and \
         where): its opinion is not clean, and alerts on files it did not review say \
         nothing about them. Raise the limits named, or review those files by hand.",
    )
}

/// The rule of the not-a-clean-opinion result, after the limited-coverage rule.
fn not_clean_rule() -> Value {
    notice_rule(
        NoticeKind::NotClean,
        "Not a clean opinion: no verified finding, but the review cannot say the change is clean",
        "vouch reviewed every changed file and verified no finding, but its opinion is not \
         clean (the result names why, for example that no clean-result audit ran): the \
         absence of alerts is not a clean review. Add the audit to the composition, or \
         review the change by hand.",
    )
}

fn notice_rule(kind: NoticeKind, short: &str, help: &str) -> Value {
    let id = kind.check();
    json!({
        "id": id,
        "name": rule_name(id),
        "shortDescription": {"text": short},
        "fullDescription": {"text": help},
        "help": {"text": help, "markdown": help},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"tags": ["vouch", id]}
    })
}

/// A notice's result: file-level, on the file the notice names; its rule after every
/// area's.
fn coverage_result(notice: &OutcomeNotice) -> Value {
    let check = notice.kind.check();
    let text = notice.text("\n- ");
    let index = match notice.kind {
        NoticeKind::NotClean => Area::ALL.len() + 1,
        _ => Area::ALL.len(),
    };
    json!({
        "ruleId": check,
        "ruleIndex": index,
        "level": "warning",
        "message": {"text": text},
        "locations": [{"physicalLocation": physical(&notice.path, None)}],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(check, &notice.path, Revision::Head, "")}
    })
}

fn log(run: Value) -> Value {
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run]
    })
}

/// Renders the report as a SARIF 2.1.0 log with one run: a rule per review area, one
/// result per published finding (file-level when it is about removed lines), citations
/// as related locations, a stable fingerprint, `automationDetails`, and the repository's
/// remote and head revision as `versionControlProvenance` (never a local path), and,
/// when coverage is limited, one `vouch/limited-coverage` warning on the first file not
/// reviewed (so a code-scanning upload never reads as "no alerts"). An incomplete or
/// aborted review has no `results` and `executionSuccessful: false`, with the failures
/// as tool execution notifications.
pub fn render_sarif(report: &ReviewReport) -> Value {
    let completed = matches!(
        report.opinion.outcome,
        Outcome::Findings | Outcome::NoFindings | Outcome::NothingToReview
    );
    let notifications: Vec<Value> = report
        .failures
        .iter()
        .map(|f| json!({"level": "error", "message": {"text": f.message}}))
        .chain(
            report
                .limitations
                .iter()
                .map(|l| json!({"level": "warning", "message": {"text": l.detail}})),
        )
        .chain((!completed).then(|| json!({"level": "error", "message": {"text": report.summary}})))
        .collect();
    let mut driver = driver(&report.tool.version, &Area::ALL);
    if let Some(rules) = driver["rules"].as_array_mut() {
        rules.push(coverage_rule());
        rules.push(not_clean_rule());
    }
    let mut run = json!({
        "tool": {"driver": driver},
        "automationDetails": {"id": automation_id(report)},
        "originalUriBaseIds": {SRCROOT: {"description": {"text": "The root of the reviewed repository."}}},
        "invocations": [{
            "executionSuccessful": completed,
            "toolExecutionNotifications": notifications
        }],
        "properties": {
            "outcome": report.opinion.outcome,
            "coverage": report.opinion.coverage,
            "clean": report.opinion.clean,
            "summary": report.summary,
            "headRevision": report.head.sha,
            "mergeBase": report.merge_base
        }
    });
    if let Some(remote) = &report.remote_url {
        run["versionControlProvenance"] = json!([{
            "repositoryUri": remote,
            "revisionId": report.head.sha,
            "mappedTo": {"uriBaseId": SRCROOT}
        }]);
    }
    if completed {
        let mut results: Vec<Value> = report.findings.iter().map(|f| result(report, f)).collect();
        if let Some(notice) = outcome_notice(report)
            && notice.kind != NoticeKind::NotCompleted
        {
            results.push(coverage_result(&notice));
        }
        run["results"] = Value::Array(results);
    }
    log(run)
}

/// The SARIF log of a run that ended before it had a report: no results, execution not
/// successful, the error as a tool execution notification.
pub fn render_sarif_failure(failure: &RunFailure) -> Value {
    log(json!({
        "tool": {"driver": driver(&failure.tool.version, &[])},
        "invocations": [{
            "executionSuccessful": false,
            "exitCode": failure.exit_code,
            "toolExecutionNotifications": [{"level": "error", "message": {"text": failure.message}}]
        }],
        "properties": {"outcome": "failed", "summary": failure.summary()}
    }))
}

/// The repository URI SARIF may name, from a git remote URL: credentials and a query are
/// removed, scp-like `user@host:path` becomes `ssh://user@host/path`, and a local path
/// or `file:` URL gives `None` (it would name the runner's machine).
pub fn repository_uri(remote: &str) -> Option<String> {
    let remote = remote.trim();
    if remote.is_empty() || remote.contains(char::is_whitespace) {
        return None;
    }
    if let Some((scheme, rest)) = remote.split_once("://") {
        let scheme = scheme.to_ascii_lowercase();
        if !matches!(scheme.as_str(), "https" | "http" | "ssh" | "git") {
            return None;
        }
        let rest = rest.split(['?', '#']).next().unwrap_or_default();
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host = match authority.rsplit_once('@') {
            // Keep a bare ssh user (`git@`), drop any password or token.
            Some((user, host)) if scheme == "ssh" && !user.contains(':') => {
                format!("{user}@{host}")
            }
            Some((_, host)) => host.to_string(),
            None => authority.to_string(),
        };
        if host.is_empty() {
            return None;
        }
        return Some(format!("{scheme}://{host}/{path}"));
    }
    // scp-like syntax: [user@]host:path, where the host has no slash.
    let (authority, path) = remote.split_once(':')?;
    // A one-letter "host" is a Windows drive; a backslash is a Windows path.
    // An `@` after the colon means the colon separated credentials, not a path.
    if authority.len() < 2
        || authority.contains('/')
        || path.is_empty()
        || path.contains('\\')
        || path.contains('@')
    {
        return None;
    }
    let path = path.trim_start_matches('/');
    Some(format!("ssh://{authority}/{path}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_names_are_pascal_case_and_differ_from_their_ids() {
        for (id, name) in [
            ("correctness", "Correctness"),
            ("failure-paths", "FailurePaths"),
            ("vouch/limited-coverage", "LimitedCoverage"),
            ("a_b.c", "ABC"),
            ("", ""),
        ] {
            assert_eq!(rule_name(id), name, "{id}");
        }
        for area in Area::ALL {
            let name = rule(area)["name"].as_str().unwrap().to_lowercase();
            assert_ne!(name, area.as_str(), "differs from the id beyond case");
        }
        let coverage = coverage_rule();
        assert_eq!(coverage["name"], "LimitedCoverage");
    }

    #[test]
    fn repository_uris_from_remotes() {
        let cases = [
            (
                "https://github.com/o/r.git",
                Some("https://github.com/o/r.git"),
            ),
            (
                "https://x-access-token:ghs_secret@github.com/o/r",
                Some("https://github.com/o/r"),
            ),
            (
                "https://user@gitlab.com/g/sub/r.git?x=1",
                Some("https://gitlab.com/g/sub/r.git"),
            ),
            (
                "git@github.com:o/r.git",
                Some("ssh://git@github.com/o/r.git"),
            ),
            ("ssh://git@host:2222/o/r", Some("ssh://git@host:2222/o/r")),
            ("ssh://git:pw@host/o/r", Some("ssh://host/o/r")),
            ("/home/runner/work/r", None),
            ("../other", None),
            ("file:///srv/git/r.git", None),
            ("C:\\repos\\r", None),
            ("", None),
            ("https:///nohost", None),
        ];
        for (remote, expected) in cases {
            assert_eq!(repository_uri(remote).as_deref(), expected, "{remote}");
        }
    }

    #[test]
    fn fingerprints_ignore_lines_case_and_punctuation_but_not_place_or_claim() {
        let f = |area, path, rev, claim| fingerprint(area, path, rev, claim);
        let a = f(
            "correctness",
            "src/a.rs",
            Revision::Head,
            "acquire() returns True late",
        );
        assert_eq!(
            a,
            f(
                "correctness",
                "src/a.rs",
                Revision::Head,
                "Acquire returns true, late."
            )
        );
        assert_ne!(
            a,
            f(
                "security",
                "src/a.rs",
                Revision::Head,
                "acquire() returns True late"
            )
        );
        assert_ne!(
            a,
            f(
                "correctness",
                "src/b.rs",
                Revision::Head,
                "acquire() returns True late"
            )
        );
        assert_ne!(
            a,
            f(
                "correctness",
                "src/a.rs",
                Revision::Base,
                "acquire() returns True late"
            )
        );
        assert_ne!(
            a,
            f(
                "correctness",
                "src/a.rs",
                Revision::Head,
                "release() returns True late"
            )
        );
        assert_eq!(a.len(), 64);
    }

    proptest::proptest! {
        /// Whatever the remote says, the URI named in SARIF carries no password or token
        /// and never names a local path.
        #[test]
        fn repository_uris_never_carry_credentials_or_local_paths(
            scheme in proptest::sample::select(vec!["https://", "http://", "ssh://", "git://", "file://", "", "/"]),
            user in "[a-z]{0,6}",
            secret in "SECRET[A-Za-z0-9_]{0,8}",
            host in "[a-z.]{0,12}(:[0-9]{1,4})?",
            path in "[A-Za-z0-9_./~-]{0,20}",
        ) {
            let remote = format!("{scheme}{user}:{secret}@{host}/{path}");
            if let Some(uri) = repository_uri(&remote) {
                proptest::prop_assert!(!uri.contains("SECRET"), "{remote} -> {uri}");
                proptest::prop_assert!(
                    ["https://", "http://", "ssh://", "git://"].iter().any(|s| uri.starts_with(s)),
                    "{remote} -> {uri}"
                );
            }
        }
    }
}
