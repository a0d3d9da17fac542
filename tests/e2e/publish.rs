//! `vouch publish` and `vouch review --publish/--pr-from-env` end to end: a real review
//! (real git, the scripted OpenAI-compatible server) published through the real binary
//! to the local forge server of the testkit, for GitHub, GitLab and Gitea, asserting the
//! exact requests (method, path, query, auth header, body).

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};
use tempfile::TempDir;
use vouch_testkit::forge::{ForgeKind, ForgeRequest, ForgeServer, PullRequest};
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
use vouch_workspace_tests::{
    Output, candidate, candidates_reply, citation, decision, finding, vouch_bin, workspace,
};

const TOKEN: &str = "forge-token-3f9a";
const SLUG: &str = "acme/widgets";

/// 30 lines; the head changes lines 20 and 21, so line 2 is outside the diff's hunks.
fn lib(head: bool) -> String {
    (1..=30)
        .map(|n| match (head, n) {
            (true, 20) => "pub const L20: u32 = 2000;\n".to_string(),
            (true, 21) => "pub const L21: u32 = 2100;\n".to_string(),
            _ => format!("pub const L{n}: u32 = {n};\n"),
        })
        .collect()
}

struct Reviewed {
    repo: TestRepo,
    base: String,
    head: String,
    dir: TempDir,
}

impl Reviewed {
    fn new() -> Reviewed {
        let repo = TestRepo::new();
        repo.write("src/lib.rs", lib(false));
        let base = repo.commit("base");
        repo.write("src/lib.rs", lib(true));
        let head = repo.commit("raise the limits");
        Reviewed {
            repo,
            base,
            head,
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn pull_request(&self) -> PullRequest {
        PullRequest {
            slug: SLUG.into(),
            number: 7,
            base_sha: self.base.clone(),
            head_sha: self.head.clone(),
            diff: self.repo.git(&["diff", &self.base, &self.head]),
            changed_files: None,
        }
    }

    /// Reviews the change with the investigator proposing `lines` (start, end, claim) and
    /// the verifier verifying them all (or leaving the last undecided when `incomplete`);
    /// the JSON report is written to `name` in the temp dir.
    async fn review(&self, name: &str, lines: &[(u32, u32, &str)], incomplete: bool) -> PathBuf {
        let server = ScriptedServer::start(script(lines, incomplete)).await;
        let out_path = self.dir.path().join(name);
        let manifest = workspace().join("tests/data/e2e/minimal.toml");
        let args: Vec<String> = [
            "review",
            "--repo",
            &self.repo.path().display().to_string(),
            "--base",
            &self.base,
            "--head",
            &self.head,
            "--format",
            "json",
            "--out",
            &out_path.display().to_string(),
            "--base-url",
            &server.base_url(),
            "--model",
            "scripted",
            "--manifest",
            &manifest.display().to_string(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let out = vouch(&args, &[]).await;
        let expected = if incomplete {
            2
        } else if lines.is_empty() {
            0
        } else {
            1
        };
        assert_eq!(out.code, expected, "{}\n{}", out.stdout, out.stderr);
        out_path
    }
}

fn script(lines: &[(u32, u32, &str)], incomplete: bool) -> Script {
    script_for("generic-investigator", lines, incomplete)
}

/// [`script`] with the candidate lane `lane` (its instance `#1`).
fn script_for(lane: &str, lines: &[(u32, u32, &str)], incomplete: bool) -> Script {
    let candidates: Vec<Value> = lines
        .iter()
        .map(|(s, e, c)| candidate("src/lib.rs", *s, *e, c))
        .collect();
    let mut decisions: Vec<Value> = lines
        .iter()
        .enumerate()
        .map(|(i, (s, e, c))| {
            decision(
                &format!("{lane} #1/{i}"),
                "verified",
                json!([citation("src/lib.rs", *s, *e)]),
                Some(finding("src/lib.rs", *s, *e, c)),
            )
        })
        .collect();
    if incomplete {
        decisions.pop();
    }
    let read = Reply::tool_call(
        "read_file",
        r#"{"path": "src/lib.rs", "start_line": 1, "end_line": 30}"#,
    );
    Script::new()
        .rule(
            Rule::when(Match::any_message_contains(format!("Instance: {lane} #1")))
                .named("lane")
                .replies([
                    read.clone(),
                    Reply::content(candidates_reply(
                        Value::Array(candidates),
                        true,
                        &["src/lib.rs"],
                    )),
                ]),
        )
        .rule(
            Rule::when(Match::any_message_contains("Instance: verifier")).replies([
                read,
                Reply::content(json!({"decisions": decisions}).to_string()),
            ]),
        )
}

/// Runs `vouch` with no inherited CI, forge, OpenAI or vouch variables, plus `envs`.
async fn vouch(args: &[String], envs: &[(&str, &str)]) -> Output {
    let mut command = tokio::process::Command::new(vouch_bin());
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, _) in std::env::vars() {
        let inherited = ["OPENAI_", "VOUCH_", "GITHUB_", "GITLAB_", "GITEA_", "CI_"]
            .iter()
            .any(|p| key.starts_with(p));
        if inherited || key == "GITLAB_CI" {
            command.env_remove(key);
        }
    }
    command.env("CI", "true");
    for (k, v) in envs {
        command.env(k, v);
    }
    let out = command.output().await.expect("running vouch");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn token_env(kind: ForgeKind) -> &'static str {
    match kind {
        ForgeKind::Github => "GITHUB_TOKEN",
        ForgeKind::Gitlab => "GITLAB_TOKEN",
        ForgeKind::Gitea => "GITEA_TOKEN",
    }
}

fn forge_name(kind: ForgeKind) -> &'static str {
    match kind {
        ForgeKind::Github => "github",
        ForgeKind::Gitlab => "gitlab",
        ForgeKind::Gitea => "gitea",
    }
}

/// `vouch publish REPORT --forge K --repo-slug acme/widgets --pr 7 --api-url URL` with
/// the forge's token variable set to `token`.
async fn publish(kind: ForgeKind, server: &ForgeServer, report: &Path, token: &str) -> Output {
    let args: Vec<String> = [
        "publish",
        &report.display().to_string(),
        "--forge",
        forge_name(kind),
        "--repo-slug",
        SLUG,
        "--pr",
        "7",
        "--api-url",
        &server.api_url(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    vouch(&args, &[(token_env(kind), token)]).await
}

fn lines(requests: &[ForgeRequest]) -> Vec<String> {
    requests.iter().map(ForgeRequest::line).collect()
}

/// Every request carries the forge's auth scheme with the token.
fn assert_auth(kind: ForgeKind, requests: &[ForgeRequest]) {
    for r in requests {
        match kind {
            ForgeKind::Github => {
                assert_eq!(
                    r.header("authorization"),
                    Some(format!("Bearer {TOKEN}").as_str()),
                    "{}",
                    r.line()
                );
                assert_eq!(r.header("accept"), Some("application/vnd.github+json"));
                assert_eq!(r.header("x-github-api-version"), Some("2022-11-28"));
            }
            ForgeKind::Gitlab => assert_eq!(r.header("private-token"), Some(TOKEN), "{}", r.line()),
            ForgeKind::Gitea => assert_eq!(
                r.header("authorization"),
                Some(format!("token {TOKEN}").as_str()),
                "{}",
                r.line()
            ),
        }
        assert!(
            r.header("user-agent")
                .is_some_and(|u| u.starts_with("vouch/")),
            "{}",
            r.line()
        );
    }
}

fn marker_of(body: &str) -> &str {
    let start = body.find("<!-- vouch:finding:").expect("finding marker");
    &body[start..start + 19 + 16 + 4]
}

const A: (u32, u32, &str) = (20, 20, "L20 overflows the u8 it is later cast to");
const C: (u32, u32, &str) = (21, 21, "L21 overflows the u8 it is later cast to");
const B: (u32, u32, &str) = (2, 2, "L2 is read as a port elsewhere");

/// The reads of a first publish of `base..head` (the token's user last but on Gitea,
/// where it is read before the reviews; on GitHub then the compare that gives the merge
/// base).
fn first_reads(kind: ForgeKind, (base, head): (&str, &str)) -> Vec<String> {
    match kind {
        ForgeKind::Github => vec![
            "GET /repos/acme/widgets/pulls/7".into(),
            "GET /repos/acme/widgets/pulls/7/files?per_page=100&page=1".into(),
            "GET /repos/acme/widgets/issues/7/comments?per_page=100&page=1".into(),
            "GET /repos/acme/widgets/pulls/7/comments?per_page=100&page=1".into(),
            "GET /user".into(),
            format!("GET /repos/acme/widgets/compare/{base}...{head}"),
        ],
        ForgeKind::Gitlab => vec![
            "GET /api/v4/projects/acme%2Fwidgets/merge_requests/7".into(),
            "GET /api/v4/projects/acme%2Fwidgets/merge_requests/7/diffs?per_page=100&page=1".into(),
            "GET /api/v4/projects/acme%2Fwidgets/merge_requests/7/notes?sort=asc&order_by=created_at&per_page=100&page=1".into(),
            "GET /api/v4/projects/acme%2Fwidgets/merge_requests/7/discussions?per_page=100&page=1".into(),
            "GET /api/v4/user".into(),
        ],
        ForgeKind::Gitea => vec![
            "GET /api/v1/repos/acme/widgets/pulls/7".into(),
            "GET /api/v1/repos/acme/widgets/pulls/7.diff".into(),
            "GET /api/v1/repos/acme/widgets/issues/7/comments".into(),
            "GET /api/v1/user".into(),
            "GET /api/v1/repos/acme/widgets/pulls/7/reviews?limit=50&page=1".into(),
        ],
    }
}

/// First run: summary + inline comments for A and C (B is outside the diff: summary);
/// the same report again: no request that changes anything; a re-review where C is gone:
/// the summary is updated in place, C's comment resolved (or marked), A kept, nothing new.
async fn first_run_rerun_and_gone_finding(kind: ForgeKind) {
    let r = Reviewed::new();
    let first = r.review("first.json", &[A, C, B], false).await;
    let second = r.review("second.json", &[A, B], false).await;
    let server = ForgeServer::start(kind, TOKEN, r.pull_request()).await;

    let out = publish(kind, &server, &first, TOKEN).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("inline comments: 2 created, 0 kept, 0 resolved"),
        "{}",
        out.stdout
    );
    let requests = server.requests();
    assert_auth(kind, &requests);
    let reads: Vec<String> = lines(&requests)
        .into_iter()
        .filter(|l| l.starts_with("GET"))
        .collect();
    assert_eq!(reads, first_reads(kind, (&r.base, &r.head)));
    let writes = server.mutations();
    let inline = server.inline_comments();
    assert_eq!(inline.len(), 2, "{inline:?}");
    assert_eq!(
        inline.iter().map(|c| c.line).collect::<Vec<_>>(),
        [Some(20), Some(21)]
    );
    let (a_body, c_body) = (inline[0].body.clone(), inline[1].body.clone());
    assert!(a_body.contains("L20 overflows") && c_body.contains("L21 overflows"));
    let summary_body = server.comments()[0].body.clone();
    match kind {
        ForgeKind::Github => {
            assert_eq!(
                lines(&writes),
                [
                    "POST /repos/acme/widgets/pulls/7/comments",
                    "POST /repos/acme/widgets/pulls/7/comments",
                    "POST /repos/acme/widgets/issues/7/comments",
                ]
            );
            assert_eq!(
                writes[0].body,
                json!({"body": a_body, "commit_id": r.head, "path": "src/lib.rs", "line": 20, "side": "RIGHT"})
            );
            assert_eq!(writes[2].body, json!({"body": summary_body}));
        }
        ForgeKind::Gitlab => {
            let mr = "/api/v4/projects/acme%2Fwidgets/merge_requests/7";
            assert_eq!(
                lines(&writes),
                [
                    format!("POST {mr}/discussions"),
                    format!("POST {mr}/discussions"),
                    format!("POST {mr}/notes")
                ]
            );
            assert_eq!(
                writes[0].body,
                json!({"body": a_body, "position": {
                "position_type": "text", "base_sha": r.base, "start_sha": r.base, "head_sha": r.head,
                "old_path": "src/lib.rs", "new_path": "src/lib.rs", "new_line": 20}})
            );
            assert_eq!(writes[2].body, json!({"body": summary_body}));
        }
        ForgeKind::Gitea => {
            assert_eq!(
                lines(&writes),
                [
                    "POST /api/v1/repos/acme/widgets/pulls/7/reviews",
                    "POST /api/v1/repos/acme/widgets/issues/7/comments"
                ]
            );
            assert_eq!(
                writes[0].body,
                json!({
                "event": "COMMENT",
                "body": "vouch: 2 verified finding(s) on changed lines; the summary comment has the whole review.",
                "commit_id": r.head,
                "comments": [
                    {"path": "src/lib.rs", "body": a_body, "new_position": 20, "old_position": 0},
                    {"path": "src/lib.rs", "body": c_body, "new_position": 21, "old_position": 0},
                ]})
            );
            assert_eq!(writes[1].body, json!({"body": summary_body}));
        }
    }
    assert!(
        summary_body.starts_with(&format!(
            "<!-- vouch:summary -->\n<!-- vouch:head {} -->\n## vouch review: verified findings",
            r.head
        )),
        "{summary_body}"
    );
    assert!(summary_body.contains("2 finding(s) are commented on their lines."));
    assert!(
        summary_body.contains("### Findings outside the diff")
            && summary_body.contains("L2 is read as a port elsewhere"),
        "{summary_body}"
    );
    assert!(
        summary_body.contains("in `acme/widgets`"),
        "the slug, not the runner's path: {summary_body}"
    );
    assert!(!summary_body.contains(&r.repo.path().display().to_string()));
    assert!(!out.stdout.contains(TOKEN) && !out.stderr.contains(TOKEN));

    // The same report again: nothing changes, nothing is duplicated.
    server.clear_requests();
    let out = publish(kind, &server, &first, TOKEN).await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(lines(&server.mutations()), Vec::<String>::new());
    assert!(
        out.stdout
            .contains("(unchanged); inline comments: 0 created, 2 kept, 0 resolved"),
        "{}",
        out.stdout
    );

    // A re-review in which C is gone.
    server.clear_requests();
    let out = publish(kind, &server, &second, TOKEN).await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("(updated); inline comments: 0 created, 1 kept, 1 resolved"),
        "{}",
        out.stdout
    );
    let writes = server.mutations();
    let summary_id = server.comments()[0].id;
    let inline = server.inline_comments();
    assert_eq!(
        server.comments().len(),
        1,
        "the summary is updated in place"
    );
    assert_eq!(inline.len(), 2, "no inline comment is added");
    let c = &inline[1];
    match kind {
        ForgeKind::Github => {
            assert_eq!(
                lines(&writes),
                [
                    format!("PATCH /repos/acme/widgets/pulls/comments/{}", c.id),
                    format!("PATCH /repos/acme/widgets/issues/comments/{summary_id}")
                ]
            );
            assert!(
                c.body.contains("<!-- vouch:resolved -->")
                    && c.body.contains("**Resolved:**")
                    && c.body.contains(marker_of(&c_body)),
                "{}",
                c.body
            );
            assert!(!inline[0].body.contains("Resolved"));
        }
        ForgeKind::Gitlab => {
            let mr = "/api/v4/projects/acme%2Fwidgets/merge_requests/7";
            let d = c.discussion.clone().unwrap();
            assert_eq!(
                lines(&writes),
                [
                    format!("PUT {mr}/discussions/{d}"),
                    format!("PUT {mr}/notes/{summary_id}")
                ]
            );
            assert_eq!(writes[0].body, json!({"resolved": true}));
            assert!(c.resolved && !inline[0].resolved);
        }
        ForgeKind::Gitea => {
            assert_eq!(
                lines(&writes),
                [
                    format!(
                        "POST /api/v1/repos/acme/widgets/pulls/7/comments/{}/resolve",
                        c.id
                    ),
                    format!("PATCH /api/v1/repos/acme/widgets/issues/comments/{summary_id}")
                ]
            );
            assert!(c.resolved && !inline[0].resolved);
        }
    }
    assert!(
        !server.comments()[0].body.contains("L21 overflows"),
        "the updated summary no longer lists C"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn github_first_run_rerun_and_gone_finding() {
    first_run_rerun_and_gone_finding(ForgeKind::Github).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn gitlab_first_run_rerun_and_gone_finding() {
    first_run_rerun_and_gone_finding(ForgeKind::Gitlab).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn gitea_first_run_rerun_and_gone_finding() {
    first_run_rerun_and_gone_finding(ForgeKind::Gitea).await;
}

/// An incomplete review posts only the summary, saying why; the inline comments of an
/// earlier complete review are left untouched (nothing is known to be gone).
async fn incomplete_posts_only_the_summary(kind: ForgeKind) {
    let r = Reviewed::new();
    let complete = r.review("complete.json", &[A], false).await;
    let incomplete = r.review("incomplete.json", &[A, C], true).await;
    let server = ForgeServer::start(kind, TOKEN, r.pull_request()).await;

    let out = publish(kind, &server, &incomplete, TOKEN).await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(
        server.mutations().len(),
        1,
        "{:?}",
        lines(&server.mutations())
    );
    assert!(server.inline_comments().is_empty());
    let body = &server.comments()[0].body;
    assert!(
        body.contains("## vouch review: incomplete, nothing published"),
        "{body}"
    );
    assert!(
        body.contains("**The review did not complete, so no finding is published.** Why:"),
        "{body}"
    );
    assert!(body.contains("no decision"), "the failure is named: {body}");

    let server = ForgeServer::start(kind, TOKEN, r.pull_request()).await;
    assert_eq!(publish(kind, &server, &complete, TOKEN).await.code, 0);
    server.clear_requests();
    let out = publish(kind, &server, &incomplete, TOKEN).await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    let writes = lines(&server.mutations());
    assert_eq!(writes.len(), 1, "only the summary is updated: {writes:?}");
    assert!(
        writes[0].contains("comments/") || writes[0].contains("/notes/"),
        "{writes:?}"
    );
    assert!(
        server
            .inline_comments()
            .iter()
            .all(|c| !c.resolved && !c.body.contains("Resolved"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn github_incomplete_posts_only_the_summary() {
    incomplete_posts_only_the_summary(ForgeKind::Github).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn gitlab_incomplete_posts_only_the_summary() {
    incomplete_posts_only_the_summary(ForgeKind::Gitlab).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn gitea_incomplete_posts_only_the_summary() {
    incomplete_posts_only_the_summary(ForgeKind::Gitea).await;
}

/// A GitHub pull request with a published-once report and a fresh server.
async fn github_setup() -> (Reviewed, PathBuf, ForgeServer) {
    let r = Reviewed::new();
    let report = r.review("report.json", &[A, B], false).await;
    let server = ForgeServer::start(ForgeKind::Github, TOKEN, r.pull_request()).await;
    (r, report, server)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_token_is_a_401_naming_the_variable_on_every_forge() {
    let r = Reviewed::new();
    let report = r.review("report.json", &[A], false).await;
    for kind in [ForgeKind::Github, ForgeKind::Gitlab, ForgeKind::Gitea] {
        let server = ForgeServer::start(kind, TOKEN, r.pull_request()).await;
        let out = publish(kind, &server, &report, "stale-token-77").await;
        assert_eq!(out.code, 3, "{}", out.stdout);
        let var = token_env(kind);
        assert!(
            out.stdout.contains(&format!(
                "rejected the token in {var} (HTTP 401 while reading"
            )),
            "{}",
            out.stdout
        );
        assert!(
            out.stdout.contains(&format!("set {var} to a valid token")),
            "{}",
            out.stdout
        );
        assert!(!out.stdout.contains("stale-token-77") && !out.stderr.contains("stale-token-77"));
        assert_eq!(server.requests().len(), 1, "a 401 is not retried");
        assert!(server.comments().is_empty());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_token_is_named_before_any_request() {
    let (_r, report, server) = github_setup().await;
    let out = publish(ForgeKind::Github, &server, &report, "").await;
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "no GitHub token: set GITHUB_TOKEN (or name another variable with --token-env)"
        ),
        "{}",
        out.stdout
    );
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_403_names_the_permission_to_grant() {
    let (_r, report, server) = github_setup().await;
    server.fail(
        "GET",
        "/pulls/7",
        403,
        &[],
        r#"{"message":"Resource not accessible by integration"}"#,
        1,
    );
    let out = publish(ForgeKind::Github, &server, &report, TOKEN).await;
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(out.stdout.contains("GitHub refused reading pull request acme/widgets#7 (HTTP 403: Resource not accessible by integration): the token in GITHUB_TOKEN lacks permission; give the workflow `permissions: pull-requests: write`"), "{}", out.stdout);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_404_names_the_flags_to_check() {
    let (_r, report, server) = github_setup().await;
    let args: Vec<String> = [
        "publish",
        &report.display().to_string(),
        "--forge",
        "github",
        "--repo-slug",
        "acme/gadgets",
        "--pr",
        "7",
        "--api-url",
        &server.api_url(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = vouch(&args, &[("GITHUB_TOKEN", TOKEN)]).await;
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(out.stdout.contains("GitHub found nothing while reading pull request acme/gadgets#7 (HTTP 404 at http://127.0.0.1:"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("/repos/acme/gadgets/pulls/7): check --repo-slug, --pr and --api-url"),
        "{}",
        out.stdout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_422_is_reported_with_the_forge_message_and_not_retried() {
    let (_r, report, server) = github_setup().await;
    server.fail(
        "POST",
        "/pulls/7/comments",
        422,
        &[],
        r#"{"message":"Validation Failed","errors":[{"message":"line must be part of the diff"}]}"#,
        1,
    );
    let out = publish(ForgeKind::Github, &server, &report, TOKEN).await;
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stdout.contains("GitHub rejected posting an inline comment on src/lib.rs line 20 (HTTP 422: Validation Failed; line must be part of the diff)"), "{}", out.stdout);
    assert_eq!(
        lines(&server.mutations()),
        ["POST /repos/acme/widgets/pulls/7/comments"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_429_with_retry_after_is_retried_and_posts_once() {
    let (_r, report, server) = github_setup().await;
    server.fail(
        "POST",
        "/issues/7/comments",
        429,
        &[("retry-after", "0")],
        r#"{"message":"You have exceeded a secondary rate limit"}"#,
        1,
    );
    server.fail(
        "GET",
        "/pulls/7",
        403,
        &[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "0")],
        r#"{"message":"API rate limit exceeded"}"#,
        1,
    );
    let out = publish(ForgeKind::Github, &server, &report, TOKEN).await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    let all = lines(&server.requests());
    assert_eq!(
        all.iter()
            .filter(|l| *l == "GET /repos/acme/widgets/pulls/7")
            .count(),
        2,
        "{all:?}"
    );
    assert_eq!(
        lines(&server.mutations()),
        [
            "POST /repos/acme/widgets/pulls/7/comments",
            "POST /repos/acme/widgets/issues/7/comments",
            "POST /repos/acme/widgets/issues/7/comments",
        ]
    );
    assert_eq!(server.comments().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rate_limit_that_persists_or_waits_too_long_fails_clearly() {
    let (_r, report, server) = github_setup().await;
    server.fail("GET", "/pulls/7", 429, &[("retry-after", "0")], "{}", 10);
    let out = publish(ForgeKind::Github, &server, &report, TOKEN).await;
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stdout.contains("GitHub rate limit while reading pull request acme/widgets#7: HTTP 429 after 4 attempt(s)"), "{}", out.stdout);
    assert_eq!(
        server.requests().len(),
        4,
        "bounded: one try and three retries"
    );

    let (_r, report, server) = github_setup().await;
    server.fail("GET", "/pulls/7", 429, &[("retry-after", "3600")], "{}", 1);
    let out = publish(ForgeKind::Github, &server, &report, TOKEN).await;
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stdout.contains("the limit resets in 3600 s, longer than vouch waits (60 s); re-run the job after the limit resets"), "{}", out.stdout);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_that_is_not_a_report_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    std::fs::write(&path, r#"{"schemaVersion": "vouch.review-report/2"}"#).unwrap();
    let args = vec![
        "publish".to_string(),
        path.display().to_string(),
        "--forge".into(),
        "github".into(),
        "--repo-slug".into(),
        SLUG.into(),
        "--pr".into(),
        "7".into(),
    ];
    let out = vouch(&args, &[("GITHUB_TOKEN", TOKEN)]).await;
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(
        out.stdout.contains("is not a vouch JSON report"),
        "{}",
        out.stdout
    );
}

/// The CI environment of each forge, for the pull request `r` describes.
fn ci_env(kind: ForgeKind, r: &Reviewed, server: &ForgeServer) -> Vec<(String, String)> {
    let event = r.dir.path().join("event.json");
    let payload = json!({"action": "synchronize", "number": 7, "repository": {"full_name": SLUG},
        "pull_request": {"number": 7, "title": "Raise the limits", "body": "L20 and L21 grow.", "base": {"sha": r.base}, "head": {"sha": r.head}}});
    std::fs::write(&event, payload.to_string()).unwrap();
    let event = event.display().to_string();
    let pairs: Vec<(&str, String)> = match kind {
        ForgeKind::Github => vec![
            ("GITHUB_ACTIONS", "true".into()),
            ("GITHUB_EVENT_NAME", "pull_request".into()),
            ("GITHUB_EVENT_PATH", event),
            ("GITHUB_API_URL", server.api_url()),
            ("GITHUB_TOKEN", TOKEN.into()),
        ],
        ForgeKind::Gitea => vec![
            ("GITEA_ACTIONS", "true".into()),
            ("GITHUB_ACTIONS", "true".into()),
            ("GITHUB_EVENT_PATH", event),
            ("GITHUB_SERVER_URL", server.server_url()),
            ("GITEA_TOKEN", TOKEN.into()),
        ],
        ForgeKind::Gitlab => vec![
            ("GITLAB_CI", "true".into()),
            ("CI_PIPELINE_SOURCE", "merge_request_event".into()),
            ("CI_MERGE_REQUEST_IID", "7".into()),
            ("CI_MERGE_REQUEST_DIFF_BASE_SHA", r.base.clone()),
            ("CI_COMMIT_SHA", r.head.clone()),
            ("CI_PROJECT_PATH", SLUG.into()),
            ("CI_API_V4_URL", server.api_url()),
            ("CI_MERGE_REQUEST_TITLE", "Raise the limits".into()),
            ("CI_MERGE_REQUEST_DESCRIPTION", "L20 and L21 grow.".into()),
            ("GITLAB_TOKEN", TOKEN.into()),
        ],
    };
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// `vouch review --pr-from-env --publish` needs no base, head or forge flag: the change
/// and the pull request come from the CI environment.
async fn review_from_env_and_publish(kind: ForgeKind) {
    let r = Reviewed::new();
    let forge = ForgeServer::start(kind, TOKEN, r.pull_request()).await;
    let model = ScriptedServer::start(script_for("outcome-investigator", &[A], false)).await;
    let out_path = r.dir.path().join("report.json");
    let manifest = workspace().join("tests/data/e2e/outcome-only.toml");
    let args: Vec<String> = [
        "review",
        "--repo",
        &r.repo.path().display().to_string(),
        "--pr-from-env",
        "--publish",
        "--format",
        "json",
        "--out",
        &out_path.display().to_string(),
        "--base-url",
        &model.base_url(),
        "--model",
        "scripted",
        "--manifest",
        &manifest.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let env = ci_env(kind, &r, &forge);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let out = vouch(&args, &env).await;
    assert_eq!(
        out.code, 1,
        "findings exit 1\n{}\n{}",
        out.stdout, out.stderr
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&out_path).unwrap()).unwrap();
    assert_eq!(report["base"]["sha"], r.base.as_str());
    assert_eq!(report["head"]["sha"], r.head.as_str());
    assert!(out.stdout.contains("Published to"), "{}", out.stdout);
    assert_eq!(forge.comments().len(), 1);
    assert_eq!(forge.inline_comments().len(), 1);
    assert_auth(kind, &forge.requests());
    // The pull request's title and body reached the outcome investigator as its intent.
    let prompt = model.served_by("lane")[0].contents_of("user").join("\n")
        + &model.served_by("lane")[0].system().unwrap_or_default();
    assert!(prompt.contains("Raise the limits"), "{prompt}");
    assert!(prompt.contains("L20 and L21 grow."), "{prompt}");
}

#[tokio::test(flavor = "multi_thread")]
async fn github_review_from_env_and_publish() {
    review_from_env_and_publish(ForgeKind::Github).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn gitlab_review_from_env_and_publish() {
    review_from_env_and_publish(ForgeKind::Gitlab).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn gitea_review_from_env_and_publish() {
    review_from_env_and_publish(ForgeKind::Gitea).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pr_from_env_outside_a_pull_request_says_which_trigger_to_use() {
    let r = Reviewed::new();
    let event = r.dir.path().join("event.json");
    std::fs::write(&event, r#"{"ref": "refs/heads/main"}"#).unwrap();
    let args = vec![
        "review".to_string(),
        "--repo".into(),
        r.repo.path().display().to_string(),
        "--pr-from-env".into(),
    ];
    let event = event.display().to_string();
    let out = vouch(
        &args,
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_EVENT_NAME", "push"),
            ("GITHUB_EVENT_PATH", &event),
        ],
    )
    .await;
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(out.stdout.contains("the workflow ran for the `push` event, not a pull request; trigger it with `on: pull_request`"), "{}", out.stdout);
}

/// Runs `scripts/ci-review` (what action.yml and the examples run) in the CI
/// environment of `kind`, against the scripted model and the local forge.
async fn ci_review(
    kind: ForgeKind,
    r: &Reviewed,
    forge: &ForgeServer,
    model: &ScriptedServer,
    extra: &[(&str, &str)],
) -> (Output, String) {
    let outputs = r.dir.path().join("github-output.txt");
    let _ = std::fs::remove_file(&outputs);
    let mut env = ci_env(kind, r, forge);
    let manifest = workspace()
        .join("tests/data/e2e/minimal.toml")
        .display()
        .to_string();
    for (k, v) in [
        ("VOUCH_BIN", vouch_bin().display().to_string()),
        ("VOUCH_REPO", r.repo.path().display().to_string()),
        (
            "VOUCH_OUT_DIR",
            r.dir.path().join("out").display().to_string(),
        ),
        ("VOUCH_MANIFEST", manifest),
        ("OPENAI_BASE_URL", model.base_url()),
        ("VOUCH_MODEL", "scripted".into()),
        ("GITHUB_OUTPUT", outputs.display().to_string()),
    ] {
        env.push((k.to_string(), v));
    }
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let mut command = tokio::process::Command::new("bash");
    command
        .arg(workspace().join("scripts/ci-review"))
        .current_dir(r.dir.path())
        .stdin(Stdio::null());
    for (key, _) in std::env::vars() {
        if ["OPENAI_", "VOUCH_", "GITHUB_", "GITLAB_", "GITEA_", "CI_"]
            .iter()
            .any(|p| key.starts_with(p))
        {
            command.env_remove(key);
        }
    }
    command.env("CI", "true").envs(env);
    let out = command.output().await.expect("running scripts/ci-review");
    let out = Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    (out, std::fs::read_to_string(outputs).unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread")]
async fn ci_script_on_github_reviews_publishes_and_defers_the_exit_code() {
    let r = Reviewed::new();
    let forge = ForgeServer::start(ForgeKind::Github, TOKEN, r.pull_request()).await;
    let model = ScriptedServer::start(script(&[A], false)).await;
    let (out, outputs) = ci_review(
        ForgeKind::Github,
        &r,
        &forge,
        &model,
        &[
            ("VOUCH_DEFER_EXIT", "true"),
            ("VOUCH_RENDER", "sarif codequality"),
        ],
    )
    .await;
    assert_eq!(out.code, 0, "deferred\n{}\n{}", out.stdout, out.stderr);
    let report = r.dir.path().join("out/report.json");
    let sarif = r.dir.path().join("out/vouch.sarif");
    let codequality = r.dir.path().join("out/vouch.codequality");
    assert_eq!(
        outputs,
        format!(
            "report={}\ncompleted=true\nexit-code=1\nsarif={}\ncodequality={}\n",
            report.display(),
            sarif.display(),
            codequality.display()
        )
    );
    // A completed review's documents are rendered from its report: the SARIF carries
    // the verified finding, the Code Quality list one issue for it.
    let sarif: Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(
        sarif["runs"][0]["results"].as_array().map(Vec::len),
        Some(1)
    );
    let codequality: Value =
        serde_json::from_str(&std::fs::read_to_string(&codequality).unwrap()).unwrap();
    assert_eq!(
        codequality.as_array().map(Vec::len),
        Some(1),
        "{codequality:#}"
    );
    assert!(
        out.stdout.contains("Published to GitHub acme/widgets#7"),
        "{}",
        out.stdout
    );
    assert_eq!(
        (forge.comments().len(), forge.inline_comments().len()),
        (1, 1)
    );

    // Without deferral the script fails the job by --fail-on; re-running adds nothing.
    let model = ScriptedServer::start(script(&[A], false)).await;
    forge.clear_requests();
    let (out, _) = ci_review(ForgeKind::Github, &r, &forge, &model, &[]).await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        forge.mutations().iter().all(|m| m.method == "PATCH"),
        "{:?}",
        lines(&forge.mutations())
    );
    assert_eq!(
        (forge.comments().len(), forge.inline_comments().len()),
        (1, 1)
    );

    // --fail-on never passes a review with findings.
    let model = ScriptedServer::start(script(&[A], false)).await;
    let (out, outputs) = ci_review(
        ForgeKind::Github,
        &r,
        &forge,
        &model,
        &[("VOUCH_FAIL_ON", "never")],
    )
    .await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(outputs.contains("exit-code=0\n"), "{outputs}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ci_script_on_gitlab_publishes_an_incomplete_review_and_renders_nothing() {
    let r = Reviewed::new();
    let forge = ForgeServer::start(ForgeKind::Gitlab, TOKEN, r.pull_request()).await;
    let model = ScriptedServer::start(script(&[A, C], true)).await;
    let (out, outputs) = ci_review(
        ForgeKind::Gitlab,
        &r,
        &forge,
        &model,
        &[("VOUCH_RENDER", "codequality")],
    )
    .await;
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert!(
        outputs.contains("completed=false\nexit-code=2\n"),
        "{outputs}"
    );
    assert!(
        out.stdout
            .contains("the review did not complete: no codequality written"),
        "{}",
        out.stdout
    );
    assert!(!r.dir.path().join("out/vouch.codequality").exists());
    assert_eq!(
        lines(&forge.mutations()),
        ["POST /api/v4/projects/acme%2Fwidgets/merge_requests/7/notes"]
    );
    assert!(
        forge.comments()[0]
            .body
            .contains("incomplete, nothing published")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn ci_script_on_gitea_without_publishing_touches_no_forge() {
    let r = Reviewed::new();
    let forge = ForgeServer::start(ForgeKind::Gitea, TOKEN, r.pull_request()).await;
    let model = ScriptedServer::start(script(&[A], false)).await;
    let (out, outputs) = ci_review(
        ForgeKind::Gitea,
        &r,
        &forge,
        &model,
        &[("VOUCH_PUBLISH", "false")],
    )
    .await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        outputs.contains("completed=true\nexit-code=1\n"),
        "{outputs}"
    );
    assert!(forge.requests().is_empty());
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(r.dir.path().join("out/report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["head"]["sha"], r.head.as_str());
}

/// action.yml runs only these commands: the build (the same package every end-to-end
/// test builds), `scripts/ci-review` (exercised above) and the exit by its output.
#[test]
fn the_action_runs_only_the_commands_the_tests_exercise() {
    let action = std::fs::read_to_string(workspace().join("action.yml")).unwrap();
    let runs: Vec<&str> = action
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("run: "))
        .collect();
    assert_eq!(
        runs,
        [
            r#"echo "key=vouch-${{ runner.os }}-$(sha256sum "$GITHUB_ACTION_PATH/Cargo.lock" | cut -c1-16)" >>"$GITHUB_OUTPUT""#,
            r#"cargo build --release --locked -p vouch-cli --manifest-path "$GITHUB_ACTION_PATH/Cargo.toml""#,
            r#"'"$GITHUB_ACTION_PATH/scripts/ci-review"'"#,
            r#"exit "${{ steps.review.outputs.exit-code }}""#,
        ]
    );
    assert!(
        action.contains("if: inputs.sarif == 'true' && steps.review.outputs.completed == 'true'"),
        "SARIF only for completed reviews"
    );
    assert!(action.contains("VOUCH_DEFER_EXIT: 'true'"));
}

/// A report of an older head than the pull request now has: its lines may have moved,
/// so every finding goes into the summary, which says why.
#[tokio::test(flavor = "multi_thread")]
async fn a_report_of_an_older_head_lists_findings_in_the_summary() {
    let (r, report, server) = github_setup().await;
    server.set_head("0123456789abcdef0123456789abcdef01234567");
    let out = publish(ForgeKind::Github, &server, &report, TOKEN).await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(
        lines(&server.mutations()),
        ["POST /repos/acme/widgets/issues/7/comments"]
    );
    let body = &server.comments()[0].body;
    // It says, first, that it reviewed an earlier head and that later commits were not.
    assert!(
        body.contains(&format!(
            "## vouch review of `{}`, an earlier head: verified findings",
            &r.head[..12]
        )),
        "{body}"
    );
    assert!(
        body.contains("The pull request's head is now `0123456789ab`, not the reviewed")
            && body.contains("the commits after it were not reviewed"),
        "{body}"
    );
    assert!(
        body.contains("L20 overflows") && body.contains("L2 is read as a port"),
        "{body}"
    );
}

/// A review whose range is not the pull request's (here the pull request also adds a file
/// the reviewed range does not hold) never reads as the review of the whole pull request:
/// its heading says part, it names the files it did not review, and it resolves nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_report_of_part_of_a_pull_request_names_the_files_it_did_not_review() {
    let r = Reviewed::new();
    let report = r.review("report.json", &[A], false).await;
    let mut pr = r.pull_request();
    pr.diff.push_str(
        "diff --git a/src/evil.py b/src/evil.py\nnew file mode 100644\n--- /dev/null\n+++ b/src/evil.py\n@@ -0,0 +1 @@\n+import os\n",
    );
    let server = ForgeServer::start(ForgeKind::Github, TOKEN, pr).await;
    let out = publish(ForgeKind::Github, &server, &report, TOKEN).await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    let body = &server.comments()[0].body;
    assert!(
        body.contains("## vouch review of part of this pull request: verified findings"),
        "{body}"
    );
    assert!(
        body.contains("changes 1 file(s) outside the reviewed range")
            && body.contains("which were not reviewed:** `src/evil.py`."),
        "{body}"
    );
}

/// A review whose merge base is not the pull request's (here it reviewed only the last
/// commit of a pull request whose earlier commit edits the same file) says it reviewed
/// another range, on every forge, even though every file name matches.
#[tokio::test(flavor = "multi_thread")]
async fn a_report_of_another_range_than_the_pull_requests_says_so() {
    let r = Reviewed::new();
    let report = r.review("report.json", &[A], false).await;
    for kind in [ForgeKind::Github, ForgeKind::Gitlab, ForgeKind::Gitea] {
        let mut pr = r.pull_request();
        pr.base_sha = "0123456789abcdef0123456789abcdef01234567".into();
        let server = ForgeServer::start(kind, TOKEN, pr).await;
        let out = publish(kind, &server, &report, TOKEN).await;
        assert_eq!(out.code, 0, "{kind:?}: {}\n{}", out.stdout, out.stderr);
        let body = &server.comments()[0].body;
        assert!(
            body.contains("## vouch review of another range than this pull request's:")
                && body.contains("merge base is `0123456789ab`, not the reviewed"),
            "{kind:?}: {body}"
        );
    }
}

/// When the forge lists fewer files than it says the pull request changes (GitHub stops
/// at 3,000), the summary says its files could not all be checked.
#[tokio::test(flavor = "multi_thread")]
async fn a_file_list_the_forge_served_in_part_is_said_to_be_unchecked() {
    let r = Reviewed::new();
    let report = r.review("report.json", &[A], false).await;
    for kind in [ForgeKind::Github, ForgeKind::Gitea] {
        let mut pr = r.pull_request();
        pr.changed_files = Some(3_001);
        let server = ForgeServer::start(kind, TOKEN, pr).await;
        let out = publish(kind, &server, &report, TOKEN).await;
        assert_eq!(out.code, 0, "{kind:?}: {}\n{}", out.stdout, out.stderr);
        let body = &server.comments()[0].body;
        assert!(
            body.contains(
                "## vouch review (whether it covers this pull request's range could not be checked):"
            )
                && body.contains("The forge listed only part of this pull request's files"),
            "{kind:?}: {body}"
        );
    }
}

/// When the forge will not say who the token is, vouch cannot tell its comments from
/// others': on GitHub it trusts only a bot account's (a `GITHUB_TOKEN` may not read
/// `/user`) and posts; on GitLab and Gitea it stops before writing, naming what to grant.
#[tokio::test(flavor = "multi_thread")]
async fn a_token_whose_user_cannot_be_read_trusts_no_other_users_comment() {
    let r = Reviewed::new();
    let report = r.review("report.json", &[A], false).await;
    for kind in [ForgeKind::Github, ForgeKind::Gitlab, ForgeKind::Gitea] {
        let server = ForgeServer::start(kind, TOKEN, r.pull_request()).await;
        server.add_comment_by("mallory", "<!-- vouch:summary -->\nforged");
        server.fail("GET", "/user", 403, &[], r#"{"message": "token scope"}"#, 5);
        let out = publish(kind, &server, &report, TOKEN).await;
        let comments = server.comments();
        assert_eq!(
            comments[0].body, "<!-- vouch:summary -->\nforged",
            "{kind:?}"
        );
        match kind {
            ForgeKind::Github => {
                assert_eq!(out.code, 0, "{}", out.stdout);
                assert_eq!(comments.len(), 2, "its own summary beside it");
            }
            _ => {
                assert_ne!(out.code, 0, "{kind:?}: {}", out.stdout);
                assert!(server.mutations().is_empty(), "{kind:?}: nothing written");
                assert!(
                    out.stdout.contains("reading the token's user")
                        || out.stderr.contains("reading the token's user"),
                    "{kind:?}: {}\n{}",
                    out.stdout,
                    out.stderr
                );
            }
        }
    }
}

/// When the forge does not say the pull request's merge base (GitHub's compare refused),
/// the summary says the range could not be checked, never a plain verdict.
#[tokio::test(flavor = "multi_thread")]
async fn a_merge_base_the_forge_does_not_give_is_said_to_be_unchecked() {
    let r = Reviewed::new();
    let report = r.review("report.json", &[A], false).await;
    let server = ForgeServer::start(ForgeKind::Github, TOKEN, r.pull_request()).await;
    server.fail("GET", &r.head, 404, &[], r#"{"message": "Not Found"}"#, 5);
    let out = publish(ForgeKind::Github, &server, &report, TOKEN).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let body = &server.comments()[0].body;
    assert!(
        body.contains(
            "## vouch review (whether it covers this pull request's range could not be checked):"
        ) && body.contains("did not say this pull request's merge base"),
        "{body}"
    );
}

/// A comment another user wrote with vouch's summary marker (even one stating the
/// current head) is neither edited nor trusted, on every forge: vouch posts its own
/// summary beside it.
#[tokio::test(flavor = "multi_thread")]
async fn a_summary_marker_in_another_users_comment_is_not_vouchs_summary() {
    let r = Reviewed::new();
    let report = r.review("report.json", &[A], false).await;
    for kind in [ForgeKind::Github, ForgeKind::Gitlab, ForgeKind::Gitea] {
        let server = ForgeServer::start(kind, TOKEN, r.pull_request()).await;
        let forged = format!(
            "<!-- vouch:summary -->\n<!-- vouch:head {} -->\n## vouch review: clean",
            r.head
        );
        server.add_comment_by("mallory", &forged);
        let out = publish(kind, &server, &report, TOKEN).await;
        assert_eq!(out.code, 0, "{kind:?}: {}\n{}", out.stdout, out.stderr);
        let comments = server.comments();
        assert_eq!(
            comments[0].body, forged,
            "{kind:?}: the other user's comment is untouched"
        );
        assert!(
            comments.iter().any(|c| c.author == "vouch-bot"
                && c.body.contains("## vouch review: verified findings")),
            "{kind:?}: {comments:?}"
        );
    }
}

/// An inline comment another user wrote with a finding's marker is not vouch's: a review
/// that no longer holds that finding neither resolves nor edits it, on every forge.
#[tokio::test(flavor = "multi_thread")]
async fn a_finding_marker_in_another_users_inline_comment_is_left_alone() {
    let r = Reviewed::new();
    let report = r.review("report.json", &[A], false).await;
    for kind in [ForgeKind::Github, ForgeKind::Gitlab, ForgeKind::Gitea] {
        let server = ForgeServer::start(kind, TOKEN, r.pull_request()).await;
        let body = "<!-- vouch:finding:0123456789abcdef -->\nlooks like vouch";
        let id = server.add_inline_by("mallory", "src/lib.rs", 20, body);
        let out = publish(kind, &server, &report, TOKEN).await;
        assert_eq!(out.code, 0, "{kind:?}: {}\n{}", out.stdout, out.stderr);
        let theirs = server
            .inline_comments()
            .into_iter()
            .find(|c| c.id == id)
            .expect("still there");
        assert_eq!(
            (theirs.body.as_str(), theirs.resolved),
            (body, false),
            "{kind:?}"
        );
        assert!(
            !lines(&server.mutations())
                .iter()
                .any(|l| l.contains(&id.to_string()) || l.contains(&format!("{id:040x}"))),
            "{kind:?}: {:?}",
            lines(&server.mutations())
        );
    }
}

/// A review of an earlier head never replaces the summary of the pull request's current
/// head (a newer run published it first): the summary stays as it is.
#[tokio::test(flavor = "multi_thread")]
async fn a_report_of_an_older_head_keeps_the_summary_of_the_current_head() {
    let (_r, report, server) = github_setup().await;
    let current = "0123456789abcdef0123456789abcdef01234567";
    server.set_head(current);
    let newer =
        format!("<!-- vouch:summary -->\n<!-- vouch:head {current} -->\n## vouch review: clean");
    server.add_comment(&newer);
    let out = publish(ForgeKind::Github, &server, &report, TOKEN).await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        server.mutations().is_empty(),
        "{:?}",
        lines(&server.mutations())
    );
    assert_eq!(server.comments()[0].body, newer);
}

/// Every command the CI recipes run, so a new one cannot slip in untested: vouch itself
/// only through `scripts/ci-review` (exercised above) or the action; `vouch render`
/// (reviewdog), the build and the clone of vouch, `git fetch` of the diff base and
/// reviewdog itself run only on the real CI services.
#[test]
fn the_examples_run_only_known_commands() {
    let mut commands = Vec::new();
    for file in [
        "examples/github/vouch-review.yml",
        "examples/github/vouch-sarif.yml",
        "examples/github/vouch-reviewdog.yml",
        "examples/gitlab/.gitlab-ci.yml",
        "examples/gitea/vouch-review.yml",
    ] {
        let text = std::fs::read_to_string(workspace().join(file)).unwrap();
        let mut block = false;
        for line in text.lines() {
            let t = line.trim_start();
            if let Some(cmd) = t.strip_prefix("run: ") {
                block = cmd == "|";
                if !block {
                    commands.push(cmd.to_string());
                }
            } else if block
                && (t.starts_with("- ") || t.contains(':') && !t.contains(' ') || t.is_empty())
            {
                block = false;
            } else if block {
                commands.push(t.to_string());
            }
            if let Some(cmd) = t
                .strip_prefix("- ")
                .filter(|c| line.starts_with("    - ") && !c.contains(": "))
            {
                commands.push(cmd.to_string());
            }
        }
    }
    assert_eq!(
        commands,
        [
            r#""${{ steps.vouch.outputs.vouch }}" render "${{ steps.vouch.outputs.report }}" --format rdjson --out vouch.rdjson"#,
            "reviewdog -f=rdjson -name=vouch -reporter=github-pr-review -filter-mode=added < vouch.rdjson",
            r#"git fetch --quiet origin "$CI_MERGE_REQUEST_DIFF_BASE_SHA" # the diff base, if the clone lacks it"#,
            "git clone --depth 1 https://example.invalid/vouch /tmp/vouch",
            "cargo build --release --locked -p vouch-cli --manifest-path /tmp/vouch/Cargo.toml",
            "VOUCH_BIN=/tmp/vouch/target/release/vouch /tmp/vouch/scripts/ci-review",
            "git clone --depth 1 https://example.invalid/vouch /tmp/vouch",
            "cargo build --release --locked -p vouch-cli --manifest-path /tmp/vouch/Cargo.toml",
            "/tmp/vouch/scripts/ci-review",
        ]
    );
}

/// A finding on an unchanged context line of a hunk: GitLab's position needs the line's
/// base number too.
#[tokio::test(flavor = "multi_thread")]
async fn gitlab_positions_a_context_line_with_its_old_line() {
    let r = Reviewed::new();
    let report = r
        .review(
            "report.json",
            &[(18, 18, "L18 is read by the new limits")],
            false,
        )
        .await;
    let server = ForgeServer::start(ForgeKind::Gitlab, TOKEN, r.pull_request()).await;
    let out = publish(ForgeKind::Gitlab, &server, &report, TOKEN).await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    let writes = server.mutations();
    assert_eq!(writes[0].body["position"]["new_line"], 18);
    assert_eq!(writes[0].body["position"]["old_line"], 18);
    assert_eq!(server.inline_comments().len(), 1);
}

/// A Gitea without the review-comment resolve API (older than go-gitea/gitea#36441)
/// answers 404: the publish completes and says what to resolve by hand.
#[tokio::test(flavor = "multi_thread")]
async fn gitea_without_a_resolve_api_warns_instead_of_failing() {
    let r = Reviewed::new();
    let first = r.review("first.json", &[A], false).await;
    let second = r.review("second.json", &[], false).await;
    let server = ForgeServer::start(ForgeKind::Gitea, TOKEN, r.pull_request()).await;
    assert_eq!(
        publish(ForgeKind::Gitea, &server, &first, TOKEN).await.code,
        0
    );
    server.fail(
        "POST",
        "/resolve",
        404,
        &[],
        r#"{"message":"not found"}"#,
        1,
    );
    let out = publish(ForgeKind::Gitea, &server, &second, TOKEN).await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    let id = server.inline_comments()[0].id;
    assert!(
        out.stdout.contains(&format!(
            "warning: this Gitea has no API to resolve review comment {id}"
        )),
        "{}",
        out.stdout
    );
    assert!(
        server.comments()[0]
            .body
            .contains("## vouch review: no verified findings"),
        "{}",
        server.comments()[0].body
    );
}

/// Lists are read page by page: a summary behind 150 other comments is still found and
/// updated, not posted twice.
#[tokio::test(flavor = "multi_thread")]
async fn the_summary_is_found_past_the_first_page() {
    let r = Reviewed::new();
    let first = r.review("first.json", &[A], false).await;
    let second = r.review("second.json", &[A, B], false).await;
    let server = ForgeServer::start(ForgeKind::Github, TOKEN, r.pull_request()).await;
    for i in 0..150 {
        server.add_comment(&format!("comment {i}"));
    }
    assert_eq!(
        publish(ForgeKind::Github, &server, &first, TOKEN)
            .await
            .code,
        0
    );
    server.clear_requests();
    let out = publish(ForgeKind::Github, &server, &second, TOKEN).await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    let reads = lines(&server.requests());
    assert!(
        reads
            .contains(&"GET /repos/acme/widgets/issues/7/comments?per_page=100&page=2".to_string()),
        "{reads:?}"
    );
    assert_eq!(server.comments().len(), 151);
    let summary_id = server.comments()[150].id;
    assert_eq!(
        lines(&server.mutations()),
        [format!(
            "PATCH /repos/acme/widgets/issues/comments/{summary_id}"
        )]
    );
}

/// With the report on stdout, `--publish` adds nothing after it: stdout stays one valid
/// JSON document.
#[tokio::test(flavor = "multi_thread")]
async fn review_publish_keeps_stdout_a_valid_document() {
    let r = Reviewed::new();
    let forge = ForgeServer::start(ForgeKind::Github, TOKEN, r.pull_request()).await;
    let model = ScriptedServer::start(script(&[A], false)).await;
    let manifest = workspace()
        .join("tests/data/e2e/minimal.toml")
        .display()
        .to_string();
    let args: Vec<String> = [
        "review",
        "--repo",
        &r.repo.path().display().to_string(),
        "--base",
        &r.base,
        "--head",
        &r.head,
        "--format",
        "json",
        "--base-url",
        &model.base_url(),
        "--model",
        "scripted",
        "--manifest",
        &manifest,
        "--publish",
        "--forge",
        "github",
        "--repo-slug",
        SLUG,
        "--pr",
        "7",
        "--api-url",
        &forge.api_url(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = vouch(&args, &[("GITHUB_TOKEN", TOKEN)]).await;
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.json()["opinion"]["outcome"], "findings");
    assert_eq!(
        (forge.comments().len(), forge.inline_comments().len()),
        (1, 1)
    );
}
