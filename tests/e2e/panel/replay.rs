//! The replay test: the case the coverage contract was written for. A change of 11
//! files, five reviewers, every one of which first answers with natural-language
//! analysis that claims all files were reviewed, followed (or not) by JSON. The replies
//! live in `tests/data/panel/replay/` (see its README).

use serde_json::{Value, json};
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};

use super::*;

/// The canonical list of [`replay_change`]: sorted by bytes, current paths only.
const ELEVEN: [&str; 11] = [
    ".github/workflows/ci.yml",
    "AGENTS.md",
    "CHANGELOG.md",
    "README.md",
    "docs/verification/example.md",
    "src/AGENTS.md",
    "src/config.rs",
    "src/legacy.rs",
    "src/lib.rs",
    "src/parse.rs",
    "tests/parse.rs",
];

const SETTINGS: &str = "/// Settings of the port tool.\npub struct Settings {\n    /// Listen address.\n    pub host: String,\n    /// Ports to listen on.\n    pub ports: Vec<u16>,\n    /// Seconds before an idle connection closes.\n    pub idle_secs: u64,\n}\n\nimpl Default for Settings {\n    fn default() -> Self {\n        Settings { host: \"127.0.0.1\".into(), ports: vec![8080], idle_secs: 30 }\n    }\n}\n";

const PARSE_HEAD: &str = "/// Parses a comma-separated list of ports.\npub fn parse_ports(s: &str) -> Vec<u16> {\n    s.split(',')\n        .filter_map(|p| p.trim().parse::<u32>().ok())\n        .map(|n| n as u16)\n        .collect()\n}\n";

/// A change of 11 files: modified, added, deleted, renamed (`src/settings.rs` →
/// `src/config.rs`), documentation, changelog, CI workflow and scoped instructions,
/// written in no particular order.
pub fn replay_change() -> Change {
    let repo = TestRepo::new();
    repo.write("src/parse.rs", "/// Parses one port.\npub fn parse_port(s: &str) -> Option<u16> {\n    s.trim().parse().ok()\n}\n")
        .write("src/settings.rs", SETTINGS)
        .write("README.md", "# ports\n")
        .write(".github/workflows/ci.yml", "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo test\n")
        .write("src/legacy.rs", "pub fn old_parse() {}\n")
        .write("AGENTS.md", "# Agents\n\nEvery behaviour change adds a CHANGELOG.md entry.\n")
        .write("CHANGELOG.md", "# Changelog\n")
        .write("src/lib.rs", "pub mod legacy;\npub mod parse;\npub mod settings;\n");
    let base = repo.commit("base");
    repo.write("tests/parse.rs", "#[test]\nfn parses_two() {\n    assert_eq!(ports::parse::parse_ports(\"80, 443\"), vec![80, 443]);\n}\n")
        .write("src/parse.rs", PARSE_HEAD)
        .rename("src/settings.rs", "src/config.rs")
        .write("src/config.rs", SETTINGS.replace("30", "60"))
        .delete("src/legacy.rs")
        .write("src/lib.rs", "pub mod config;\npub mod parse;\n")
        .write("src/AGENTS.md", "# Source instructions\n\nEvery parser gets tests under tests/.\n")
        .write("docs/verification/example.md", "# Example\n\n`parse_ports(\"80, 443\")` is `[80, 443]`.\n")
        .write("README.md", "# ports\n\nParses `80, 443` into a list of ports.\n")
        .write("CHANGELOG.md", "# Changelog\n\n- parse a list of ports\n")
        .write("AGENTS.md", "# Agents\n\nEvery behaviour change adds a CHANGELOG.md entry.\nScoped rules live in src/AGENTS.md.\n")
        .write(".github/workflows/ci.yml", "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo test\n      - run: cargo clippy\n");
    let head = repo.commit("parse ports from a list and document it");
    Change { repo, base, head }
}

fn fixture(name: &str) -> String {
    let path = workspace().join("tests/data/panel/replay").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The replay script; `bug_review_2_repair` is the repaired receipt of bug-review #2.
/// The two prose-only reviewers' coverage retries answer with the exact receipt.
fn replay_script(bug_review_2_repair: &str) -> Script {
    let mut script = Script::new();
    for label in PROSE_ONLY {
        script = script.rule(
            Rule::when(retry_execution(label))
                .named(format!("{label} retry"))
                .reply(Reply::content(fixture("bug-review-2-retry.json"))),
        );
    }
    for (label, file) in [
        ("instructions-review #1", "instructions-review-1.txt"),
        ("instructions-review #2", "instructions-review-2.txt"),
        ("bug-review #1", "bug-review-1.txt"),
        ("bug-review #2", "bug-review-2.txt"),
        ("objective-review #1", "objective-review-1.txt"),
    ] {
        script = script.rule(
            Rule::when(first_execution(label))
                .named(label)
                .reply(Reply::content(fixture(file))),
        );
    }
    script
        .rule(
            Rule::when(repair_of("[replay instructions-review #2]"))
                .named("instructions-review #2 repair")
                .reply(Reply::content(fixture("repair-instructions-review-2.json"))),
        )
        .rule(
            Rule::when(repair_of("[replay bug-review #2]"))
                .named("bug-review #2 repair")
                .reply(Reply::content(fixture(bug_review_2_repair))),
        )
        .rule(
            Rule::when(Match::user_contains("Instance: verifier\n"))
                .named("verifier")
                .reply(Reply::content(fixture("verifier.json"))),
        )
}

/// The reviewers whose first reply is prose only: each goes to repair, and its repaired
/// `complete: true` (no JSON receipt to check it by) to the coverage retry.
const PROSE_ONLY: [&str; 2] = ["instructions-review #2", "bug-review #2"];

/// What both replay runs must show: the canonical list, the repairs (exactly the two
/// prose-only replies, each once, each receipt recorded incomplete and retried once),
/// the verified finding, full coverage.
fn assert_replay_completed(out: &Output, server: &ScriptedServer) -> Value {
    assert_eq!(
        out.code, 1,
        "verified findings exit 1\n{}\n{}",
        out.stdout, out.stderr
    );
    let report = out.json();
    assert_eq!(report["opinion"]["outcome"], "findings");
    assert_eq!(report["opinion"]["coverage"], "full");
    assert_eq!(report["expectedFiles"], json!(ELEVEN));
    assert_eq!(report["limitations"], json!([]));
    assert_eq!(report["failures"], json!([]));
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{report:#}");
    assert_eq!(findings[0]["path"], "src/parse.rs");
    assert_eq!(
        findings[0]["provenance"]["proposedBy"],
        json!(["bug-review #1"])
    );
    for label in LABELS {
        let (complete, missing, unexpected, _) = coverage_of(&report, label);
        assert_eq!(
            (complete, missing, unexpected),
            (true, json!([]), json!([])),
            "{label}: the final receipt is exact"
        );
        let prose_only = PROSE_ONLY.contains(&label);
        let s = stage(&report, label);
        assert_eq!(s["repaired"], prose_only, "{label}");
        assert_eq!(s["receiptDowngraded"], prose_only, "{label}");
        assert_eq!(s["retried"], prose_only, "{label}");
    }
    assert_only_retried(server, &PROSE_ONLY);
    assert_eq!(server.served_by("instructions-review #2 repair").len(), 1);
    assert_eq!(server.served_by("bug-review #2 repair").len(), 1);
    assert_eq!(
        repairs(server).len(),
        2,
        "only the prose-only replies went to repair"
    );
    for repair in repairs(server) {
        assert!(!repair.has_tools());
        assert!(
            task(&repair).contains(&format!(
                "<expected-files>\n{}\n</expected-files>",
                serde_json::to_string(&ELEVEN).unwrap()
            )),
            "the repair has the exact list"
        );
    }
    assert_eq!(server.served_by("verifier").len(), 1);
    assert!(server.unmatched().is_empty(), "{:?}", server.unmatched());
    report
}

#[tokio::test(flavor = "multi_thread")]
async fn replay_prose_wrapped_replies_from_five_reviewers_complete_and_prose_only_ones_retry() {
    let change = replay_change();
    let server = ScriptedServer::start(replay_script("repair-bug-review-2.json")).await;
    let out = review(&change, &server, &[]).await;
    assert_replay_completed(&out, &server);
    // Every reviewer saw the same canonical list; the previous rename path is not in it.
    let list = format!(
        "<expected-files>\n{}\n</expected-files>",
        serde_json::to_string(&ELEVEN).unwrap()
    );
    for label in LABELS {
        let first = server.served_by(label);
        assert!(task(&first[0]).contains(&list), "{label}");
        assert!(
            task(&first[0]).contains("- src/config.rs: renamed from src/settings.rs"),
            "the previous path is diff context"
        );
    }
    let lines = diagnostics(&out, &ELEVEN);
    // The two lanes run at once, so their lines come in either order.
    let mut retried = diagnosed(&lines, "coverage-retry");
    retried.sort();
    let mut want = PROSE_ONLY.to_vec();
    want.sort();
    assert_eq!(retried, want);
    assert_eq!(diagnosed(&lines, "repair-attempted").len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn replay_repaired_receipt_dropping_two_files_names_them_in_its_one_retry() {
    let change = replay_change();
    let script = replay_script("repair-bug-review-2-drops-two.json");
    let server = ScriptedServer::start(script).await;
    let out = review(&change, &server, &[]).await;
    let report = assert_replay_completed(&out, &server);
    assert_eq!(server.served_by("bug-review #2 retry").len(), 1);
    // Recorded as `complete: false` (a prose-only reply), and the all-files rule still
    // found the two dropped files.
    assert_eq!(
        stage(&report, "bug-review #2")["firstCoverage"],
        json!({"complete": false, "reportedIncomplete": true,
               "missingFiles": ["CHANGELOG.md", "docs/verification/example.md"], "unexpectedFiles": []})
    );
    let retry = task(&server.served_by("bug-review #2 retry")[0]);
    assert!(retry.contains(
        "Missing files (inspect these now): [\"CHANGELOG.md\",\"docs/verification/example.md\"]\n"
    ));
    // The retry says why the repaired `complete: true` was not taken, without
    // misquoting it as `complete: false`.
    assert!(
        retry.contains("said coverage.complete: true, but vouch recorded it as false"),
        "{retry}"
    );
    assert!(!retry.contains("said coverage.complete: false"), "{retry}");
}

/// Rule 2: a receipt that adds the previous path of a renamed file is not exact.
#[tokio::test(flavor = "multi_thread")]
async fn previous_rename_path_in_a_receipt_is_unexpected() {
    let change = replay_change();
    let mut with_previous = ELEVEN.to_vec();
    with_previous.push("src/settings.rs");
    let mut script = Script::new()
        .rule(
            Rule::when(retry_execution("instructions-review #2"))
                .named("retry")
                .reply(Reply::content(receipt(true, &ELEVEN))),
        )
        .rule(
            Rule::when(first_execution("instructions-review #2"))
                .reply(Reply::content(receipt(true, &with_previous))),
        );
    for label in LABELS {
        script = script
            .rule(Rule::when(first_execution(label)).reply(Reply::content(receipt(true, &ELEVEN))));
    }
    let server = ScriptedServer::start(script).await;
    let out = review(&change, &server, &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(
        stage(&report, "instructions-review #2")["firstCoverage"]["unexpectedFiles"],
        json!(["src/settings.rs"])
    );
    assert_only_retried(&server, &["instructions-review #2"]);
}
