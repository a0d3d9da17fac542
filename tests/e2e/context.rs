//! Investigator context end to end (issue 14): the deterministic prefetch from the
//! repository graph (what it gives, its budget cut, the same prefetch for the verifier),
//! dismissed concerns (to the verifier, never to the audit), a pinned dynamically loaded
//! specialist as a lane, and when the outcome investigator runs.
//!
//! Every test runs the real `vouch` binary against a scripted OpenAI-compatible server on
//! 127.0.0.1 and a real git repository.

use serde_json::{Value, json};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{RecordedRequest, Reply, Script, ScriptedServer};
use vouch_workspace_tests::{
    AUDIT, CONVENTIONS, GENERIC, OUTCOME, ScriptedVerifier, VERIFIER, candidate, candidates_reply,
    citation, decision, decisions, finding, receipt, stage, workspace,
};

use crate::composition::{FILES, fixture, manifest, review, user};

const MONEY: &str = "\
def round_amount(value, digits=2, *, mode=\"half-even\"):
    \"\"\"Rounds value to digits places; mode is \"half-even\" or \"half-up\".\"\"\"
    return round(value, digits)
";

const BILLING_BASE: &str = "\
from app.money import round_amount


class Invoice:
    \"\"\"An invoice with lines.\"\"\"

    def __init__(self, lines):
        self.lines = lines

    def total(self):
        amount = sum(line.price for line in self.lines)
        return round_amount(amount, digits=2)


def print_invoice(invoice):
    assert invoice.lines, \"an invoice has lines\"
    return \"total: %s\" % invoice.total()
";

/// Head: the method `total` multiplies by quantity and rounds with a keyword argument,
/// and `print_invoice` loses its assertion (a pure removal: looked up at base).
const BILLING_HEAD: &str = "\
from app.money import round_amount


class Invoice:
    \"\"\"An invoice with lines.\"\"\"

    def __init__(self, lines):
        self.lines = lines

    def total(self):
        amount = sum(line.price * line.qty for line in self.lines)
        return round_amount(amount, digits=0, mode=\"half-up\")


def print_invoice(invoice):
    return \"total: %s\" % invoice.total()
";

const BILLING_FILES: [&str; 1] = ["app/billing.py"];

/// A Python repository whose head changes a method body and a call inside it, and removes
/// a line of another function.
fn python_fixture() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("app/money.py", MONEY)
        .write("app/billing.py", BILLING_BASE);
    let base = repo.commit("base");
    repo.write("app/billing.py", BILLING_HEAD);
    let head = repo.commit("round invoice totals half-up");
    (repo, base, head)
}

/// Every lane and the audit answer once, with no candidate and a full receipt of
/// [`BILLING_FILES`]; the rules are named after their stage.
fn lanes_without_candidates() -> Script {
    Script::new()
        .rule(stage(
            GENERIC,
            "generic",
            [receipt(json!([]), &BILLING_FILES)],
        ))
        .rule(stage(
            OUTCOME,
            "outcome",
            [receipt(json!([]), &BILLING_FILES)],
        ))
        .rule(stage(
            CONVENTIONS,
            "conventions",
            [receipt(json!([]), &BILLING_FILES)],
        ))
        .rule(stage(AUDIT, "audit", [receipt(json!([]), &BILLING_FILES)]))
}

/// The prefetch section of a request's user message (from its heading to the end of the
/// section), if it has one.
fn prefetch_section(request: &RecordedRequest) -> Option<String> {
    let text = user(request);
    let start = text.find("## Context prefetched from the repository graph")?;
    let rest = &text[start..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    Some(rest[..end].trim_end().to_string())
}

fn stage_record<'a>(report: &'a Value, label: &str) -> &'a Value {
    report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == label)
        .unwrap_or_else(|| panic!("no stage {label}: {report:#}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_prefetch_gives_the_changed_method_its_callee_contract_and_callers_to_lanes_and_verifier()
 {
    let (repo, base, head) = python_fixture();
    let script = Script::new()
        .rule(stage(
            GENERIC,
            "generic",
            [receipt(
                json!([candidate(
                    "app/billing.py",
                    12,
                    12,
                    "totals are rounded to whole units"
                )]),
                &BILLING_FILES,
            )],
        ))
        .rule(stage(
            OUTCOME,
            "outcome",
            [receipt(json!([]), &BILLING_FILES)],
        ))
        .rule(stage(
            CONVENTIONS,
            "conventions",
            [receipt(json!([]), &BILLING_FILES)],
        ))
        .rule(stage(
            VERIFIER,
            "verifier",
            [decisions(json!([decision(
                "generic-investigator #1/0",
                "verified",
                json!([citation("app/money.py", 1, 2)]),
                Some(finding(
                    "app/billing.py",
                    12,
                    12,
                    "totals are rounded to whole units"
                ))
            )]))],
        ));
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    let generic = prefetch_section(&server.served_by("generic")[0]).expect("a prefetch");
    insta::assert_snapshot!("prefetch-python-method-and-call", generic);
    // The verifier gets the same prefetch for the candidate it decides, and the callee's
    // contract it cites was never read with a tool: the prefetch counts as read.
    let verifier = prefetch_section(&server.served_by("verifier")[0]).expect("a prefetch");
    assert_eq!(verifier, generic);
    assert_eq!(report["opinion"]["outcome"], "findings", "{report:#}");
    // The report states each stage's prefetch.
    for label in ["generic-investigator #1", "verifier"] {
        let prefetch = &stage_record(&report, label)["prefetch"];
        assert_eq!(prefetch["given"], 4, "{label}: {prefetch:#}");
        assert_eq!(prefetch["budgetTokens"], 6000);
        assert_eq!(prefetch["leftOut"], json!([]));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn what_the_prefetch_budget_leaves_out_is_named_in_the_prompt_and_the_report() {
    let (repo, base, head) = python_fixture();
    let script = lanes_without_candidates();
    let server = ScriptedServer::start(script).await;
    let small = manifest("prefetch-small.toml");
    let out = review(&repo, &base, &head, &server, &["--manifest", &small], &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    let prefetch = &stage_record(&report, "generic-investigator #1")["prefetch"];
    // 700 tokens cover the section's header and notes (about 640) and leave room for
    // small items only.
    assert_eq!(prefetch["budgetTokens"], 700, "{prefetch:#}");
    let left_out: Vec<&str> = prefetch["leftOut"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    // The whole method is the most valuable item but does not fit; a smaller one does.
    assert!(
        left_out.iter().any(|l| l
            .starts_with("enclosing function `total` in `Invoice` at head app/billing.py:10-12")),
        "{left_out:?}"
    );
    assert!(prefetch["given"].as_u64().unwrap() >= 1, "{prefetch:#}");
    assert!(prefetch["givenTokens"].as_u64().unwrap() <= 700 - 640);
    let section = prefetch_section(&server.served_by("generic")[0]).unwrap();
    assert!(
        vouch_core::estimate_tokens(serde_json::to_string(&section).unwrap().len()) <= 700,
        "the whole section fits its budget: {section}"
    );
    assert!(
        section.contains("Left out (over the prefetch budget): enclosing function `total`"),
        "{section}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn dismissed_concerns_reach_the_verifier_and_the_report_but_never_the_audit() {
    const MARK: &str = "DISMISSED-7c1e the widened parse might wrap";
    let (repo, base, head) = fixture();
    let mut dismissing: Value =
        serde_json::from_str(&candidates_reply(json!([]), true, &FILES)).unwrap();
    dismissing["dismissedConcerns"] = json!([{"path": "src/lib.rs", "startLine": 3, "endLine": 4,
        "concern": MARK, "evidence": "n is u32 and the cast is checked at src/lib.rs:4"}]);
    let script = Script::new()
        .rule(stage(
            GENERIC,
            "generic",
            [Reply::content(dismissing.to_string())],
        ))
        .rule(stage(OUTCOME, "outcome", [receipt(json!([]), &FILES)]))
        .rule(stage(
            CONVENTIONS,
            "conventions",
            [receipt(json!([]), &FILES)],
        ))
        .rule(stage(
            AUDIT,
            "audit",
            [receipt(
                json!([candidate("src/lib.rs", 3, 4, "ports above 65535 wrap")]),
                &FILES,
            )],
        ))
        .rule(
            ScriptedVerifier::new()
                .dismisses(
                    "clean-result-audit #1/0",
                    json!([citation("src/lib.rs", 3, 4)]),
                )
                .rule(),
        );
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    let audit = server.served_by("audit");
    assert!(!audit.is_empty());
    for request in &audit {
        assert!(
            !request.raw_body.contains("DISMISSED-7c1e"),
            "the audit stays independent"
        );
    }
    let verifier = user(&server.served_by("verifier")[0]);
    assert!(
        verifier.contains("<dismissed by=\"generic-investigator #1\">")
            && verifier.contains(MARK)
            && verifier.contains("cleared by: n is u32 and the cast is checked at src/lib.rs:4"),
        "{verifier}"
    );
    assert!(
        report["observations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o.as_str().unwrap().starts_with(&format!(
                "generic-investigator #1 dismissed a concern at src/lib.rs:3-4: {MARK}"
            ))),
        "{report:#}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pinned_dynamic_specialist_runs_on_its_selection_and_its_finding_names_it() {
    let (repo, base, head) = fixture();
    let dir = vouch_testkit::cargo::build_packages(
        &workspace().join("Cargo.toml"),
        &["vouch-test-plugin-lane"],
    );
    let library = dir.join(format!(
        "{}vouch_test_plugin_lane{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let sha256 = vouch_host::registry::sha256_file(&library).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let pinned = tmp.path().join("pinned.toml");
    std::fs::write(
        &pinned,
        format!(
            "[composition]\nname = \"pinned\"\ntools = \"on\"\n\n\
             [model]\nrequest_timeout_secs = 20\nmax_retries = 0\n\n\
             [[specialist]]\nid = \"generic-investigator\"\nversion = \"1.0.0\"\nrole = \"investigator\"\n\n\
             [[specialist]]\nid = \"test-lane\"\nversion = \"0.1.0\"\nrole = \"reviewer\"\n\
             library = {:?}\nsha256 = \"{sha256}\"\n\
             [specialist.select]\ninclude = [\"src/**\"]\n\n\
             [verifier]\nid = \"verifier\"\nversion = \"1.0.0\"\n",
            library.display().to_string()
        ),
    )
    .unwrap();
    let script = Script::new()
        .rule(stage(GENERIC, "generic", [receipt(json!([]), &FILES)]))
        .rule(stage(
            "Instance: test-lane #1",
            "lane",
            [receipt(
                json!([candidate(
                    "src/lib.rs",
                    3,
                    4,
                    "ports above 65535 wrap silently"
                )]),
                &["src/lib.rs"],
            )],
        ))
        .rule(
            ScriptedVerifier::new()
                .confirms(
                    "test-lane #1/0",
                    "src/lib.rs",
                    3,
                    4,
                    "ports above 65535 wrap silently",
                )
                .rule(),
        );
    let server = ScriptedServer::start(script).await;
    let manifest = pinned.display().to_string();
    let out = review(
        &repo,
        &base,
        &head,
        &server,
        &["--manifest", &manifest],
        &[],
    )
    .await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    // The lane received only its selection.
    let lane = user(&server.served_by("lane")[0]);
    assert!(
        lane.contains("<expected-files>\n[\"src/lib.rs\"]\n</expected-files>"),
        "{lane}"
    );
    let record = stage_record(&report, "test-lane #1");
    assert_eq!(record["specialist"], "test-lane");
    assert_eq!(record["version"], "0.1.0");
    assert_eq!(record["assignedFiles"], 1);
    assert_eq!(record["status"], "accepted", "{record:#}");
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{report:#}");
    assert_eq!(
        findings[0]["provenance"]["proposedBy"],
        json!(["test-lane #1"])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_outcome_investigator_is_skipped_without_intent_and_the_report_says_so() {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "pub fn a() -> u8 {\n    1\n}\n");
    repo.git(&["add", "-A"]);
    repo.git(&[
        "commit",
        "-q",
        "--allow-empty-message",
        "--no-verify",
        "-m",
        "",
    ]);
    let base = repo.rev("HEAD");
    repo.write("src/lib.rs", "pub fn a() -> u8 {\n    2\n}\n");
    repo.git(&["add", "-A"]);
    repo.git(&[
        "commit",
        "-q",
        "--allow-empty-message",
        "--no-verify",
        "-m",
        "",
    ]);
    let head = repo.rev("HEAD");
    let files = ["src/lib.rs"];
    let script = Script::new()
        .rule(stage(GENERIC, "generic", [receipt(json!([]), &files)]))
        .rule(stage(
            CONVENTIONS,
            "conventions",
            [receipt(json!([]), &files)],
        ))
        .rule(stage(AUDIT, "audit", [receipt(json!([]), &files)]));
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert!(
        server
            .chat_requests()
            .iter()
            .all(|r| !r.raw_body.contains(OUTCOME)),
        "no outcome request without intent"
    );
    let outcome = stage_record(&report, "outcome-investigator #1");
    assert_eq!(outcome["status"], "skipped", "{outcome:#}");
    assert_eq!(outcome["problem"], "no pull-request intent was detected");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_intent_the_outcome_investigator_runs_at_the_same_time_as_the_generic_lane() {
    let (repo, base, head) = fixture();
    // Each lane's first answer is held until the three lanes are in flight together, so
    // the server records who ran alongside whom; a host running them one after another
    // would leave that empty.
    let held = |files: &[&str]| {
        Reply::content(candidates_reply(json!([]), true, files)).hold_until_in_flight(3)
    };
    let script = Script::new()
        .rule(stage(GENERIC, "generic", [held(&FILES)]))
        .rule(stage(OUTCOME, "outcome", [held(&FILES)]))
        .rule(stage(CONVENTIONS, "conventions", [held(&FILES)]))
        .rule(stage(AUDIT, "audit", [receipt(json!([]), &FILES)]));
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &[], &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(
        stage_record(&report, "outcome-investigator #1")["status"],
        "accepted"
    );
    let generic = &server.served_by("generic")[0];
    let outcome = &server.served_by("outcome")[0];
    let (earlier, later, earlier_label) = if generic.seq < outcome.seq {
        (generic, outcome, "generic")
    } else {
        (outcome, generic, "outcome")
    };
    assert!(
        later
            .in_flight_at_arrival
            .contains(&Some(earlier_label.to_string())),
        "both lanes' requests were in flight at once: {:?} then {:?}",
        earlier.in_flight_at_arrival,
        later.in_flight_at_arrival
    );
}

/// Without tools the prefetch is given as with them, and its section names no tool: the
/// model has none to follow anything further with.
#[tokio::test(flavor = "multi_thread")]
async fn without_tools_the_prefetch_section_names_no_tool() {
    let (repo, base, head) = python_fixture();
    let script = lanes_without_candidates();
    let server = ScriptedServer::start(script).await;
    let out = review(&repo, &base, &head, &server, &["--tools", "off"], &[]).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let section = prefetch_section(&server.served_by("generic")[0]).expect("a prefetch");
    assert!(section.contains("enclosing function `total`"), "{section}");
    for tool in ["graph tools", "read_file", "grep"] {
        assert!(!section.contains(tool), "{tool:?} without tools: {section}");
    }
}
