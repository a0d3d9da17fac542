//! Table tests of the classification.

use super::*;
use serde_json::json;

#[test]
fn shell_splitting_respects_quotes_and_redirections() {
    let cmds = split_shell(
        "cd /w && git commit -m \"a; b\" | tee log.txt 2>&1 > out.txt; echo hi >/dev/null",
    );
    let words: Vec<Vec<&str>> = cmds
        .iter()
        .map(|c| c.words.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(
        words,
        vec![
            vec!["cd", "/w"],
            vec!["git", "commit", "-m", "a; b"],
            vec!["tee", "log.txt"],
            vec!["echo", "hi"]
        ]
    );
    assert_eq!(cmds[2].writes_to, ["out.txt"]);
    assert!(cmds[3].writes_to.is_empty());
}

/// Hostile nesting of substitutions is looked into only so deep: no stack overflow.
#[test]
fn deep_substitutions_are_bounded() {
    let line = "$(".repeat(100_000) + "gh pr merge 1";
    let _ = classify_command(&line);
    let line = "`$(".repeat(50_000);
    let _ = classify_command(&line);
}

#[test]
fn forge_clis_by_their_effect() {
    let merge = Some(Kind::ForgeMerge);
    let write = Some(Kind::ForgeWrite);
    let approve = Some(Kind::ForgeReview { approve: true });
    let table: &[(&str, Option<Kind>)] = &[
        (
            "gh api graphql -f 'query=query { repository(owner: \"o\", name: \"r\") { issue(number: 1) { state } } }'",
            None,
        ),
        ("gh api graphql -f 'query={ viewer { login } }'", None),
        (
            "gh api graphql -f 'query=mutation { mergePullRequest(input: {pullRequestId: \"x\"}) { clientMutationId } }'",
            merge,
        ),
        (
            "gh api graphql -f 'query=mutation { addPullRequestReview(input: {event: APPROVE}) { clientMutationId } }'",
            approve,
        ),
        (
            "gh api graphql -f 'query=mutation { closeIssue(input: {issueId: \"x\"}) { clientMutationId } }'",
            write,
        ),
        ("gh api repos/o/r/pulls/4", None),
        ("gh api -X PUT repos/o/r/pulls/4/merge", merge),
        ("gh api repos/o/r/issues/4/comments -f body=hi", write),
        ("tea pulls approve 4", approve),
        ("tea pr merge 4", merge),
        ("tea comment 4 looks-good", write),
        ("tea issues close 4", write),
        ("tea pr list", None),
        ("glab mr approve 4", approve),
        ("glab mr merge 4", merge),
        ("glab mr note 4 -m hi", write),
        ("glab mr view 4", None),
        ("glab api -X PUT projects/1/merge_requests/4/merge", merge),
        ("glab api projects/1/merge_requests/4", None),
    ];
    for (cmd, expected) in table {
        let kinds = classify_command(cmd);
        assert_eq!(kinds.first().copied(), *expected, "{cmd}");
    }
}

#[test]
fn test_runners_pointed_elsewhere_name_their_directory() {
    let table: &[(&str, Option<&str>)] = &[
        ("cargo test --workspace", None),
        (
            "cargo test --manifest-path /src/w/Cargo.toml",
            Some("/src/w"),
        ),
        ("cargo test --manifest-path=../w/Cargo.toml", Some("../w")),
        ("cargo test --manifest-path Cargo.toml", Some(".")),
        ("make -C /src/w test", Some("/src/w")),
        ("npm --prefix ../w test", Some("../w")),
        ("yarn --cwd=/src/w test", Some("/src/w")),
        ("go test -C /src/w ./...", Some("/src/w")),
        ("pytest -C x", None),
    ];
    for (cmd, expected) in table {
        let words: Vec<&str> = cmd.split_whitespace().collect();
        assert_eq!(runner_dir(&words).as_deref(), *expected, "{cmd}");
    }
}

#[test]
fn commands_are_classified_by_program_and_subcommand() {
    use Kind::*;
    let table: &[(&str, &[Kind])] = &[
        ("git status --porcelain", &[]),
        ("git -C ../wt merge --no-ff origin/main", &[LocalMerge]),
        ("git merge --abort", &[MergeRestore]),
        ("git merge-base --is-ancestor a b", &[]),
        ("git pull --ff-only", &[LocalMerge, RefUpdate]),
        ("git worktree add ../wt abc123", &[WorktreeAddRemove]),
        ("git worktree list", &[]),
        ("git fetch origin", &[RefUpdate]),
        ("git branch --show-current", &[]),
        ("git branch -D old", &[RefUpdate]),
        ("git reset --hard abc", &[MergeRestore]),
        ("git checkout abc123", &[WorktreeChange]),
        ("git push origin HEAD", &[Push]),
        ("git config --get remote.origin.url", &[ConfigInspection]),
        ("cargo test --workspace", &[TestRun]),
        ("cd wt && npm run test:unit", &[TestRun]),
        ("python -m pytest -q", &[TestRun]),
        ("python -m unittest", &[TestRun]),
        ("python -c 'import pytest'", &[]),
        ("python script.py -m pytest", &[]),
        // Test runners started by a launcher.
        ("npx jest", &[TestRun]),
        ("npx vitest run", &[TestRun]),
        ("npx -y -p jest jest --ci", &[TestRun]),
        ("bunx vitest", &[TestRun]),
        ("uv run pytest", &[TestRun]),
        ("uv run python -m pytest", &[TestRun]),
        ("uvx pytest", &[TestRun]),
        ("poetry run pytest", &[TestRun]),
        ("pipenv run pytest", &[TestRun]),
        ("hatch run pytest", &[TestRun]),
        ("hatch test", &[TestRun]),
        ("pdm run pytest", &[TestRun]),
        ("pnpm exec jest", &[TestRun]),
        ("yarn dlx jest", &[TestRun]),
        ("npm exec -- vitest run", &[TestRun]),
        ("tox -e py312", &[TestRun]),
        ("nox -s tests", &[TestRun]),
        ("bun test", &[TestRun]),
        ("npx prettier --check .", &[]),
        ("uv run ruff check", &[]),
        ("make check", &[TestRun]),
        ("echo x > notes.md", &[FileEdit]),
        ("sed -i s/a/b/ f.rs", &[FileEdit]),
        ("sed -n 1,5p f.rs", &[]),
        ("sed -Ei 's/a/b/' f.rs", &[FileEdit]),
        ("sed -ni p f.rs", &[FileEdit]),
        ("sed -i.bak s/a/b/ f.rs", &[FileEdit]),
        ("sed --in-place s/a/b/ f.rs", &[FileEdit]),
        ("sed --in-place=.orig s/a/b/ f.rs", &[FileEdit]),
        ("sed -e s/a/b/ -i f.rs", &[FileEdit]),
        ("sed -E -n 's/i/x/p' f.rs", &[]),
        ("sed -e i f.rs", &[]),
        ("perl -pi -e 's/a/b/' f.rs", &[FileEdit]),
        ("perl -i -pe 's/a/b/' f.rs", &[FileEdit]),
        ("perl -0pi -e 's/a/b/' f.rs", &[FileEdit]),
        ("perl -pie 's/a/b/' f.rs", &[FileEdit]),
        ("perl -ne 'print if /i/' f.rs", &[]),
        ("perl -Ilib -e 'print 1'", &[]),
        // In-place edits through find, multi-call binaries, formatters and fixers.
        ("find . -name '*.rs' -exec sed -i s/a/b/ {} +", &[FileEdit]),
        ("find src -execdir sed -i s/a/b/ {} \\;", &[FileEdit]),
        ("find . -name '*.orig' -delete", &[FileEdit]),
        ("find . -name '*.rs' -exec grep -l x {} +", &[]),
        (
            "find . -exec find {} -exec sed -i s/a/b/ {} + ;",
            &[FileEdit],
        ),
        ("busybox sed -i s/a/b/ f.rs", &[FileEdit]),
        ("toybox sed -i s/a/b/ f.rs", &[FileEdit]),
        ("busybox sed -n p f.rs", &[]),
        ("cargo fmt", &[FileEdit]),
        ("cargo +nightly fmt --all", &[FileEdit]),
        ("cargo fmt --all -- --check", &[]),
        ("cargo fmt --check", &[]),
        ("cargo fix --allow-dirty", &[FileEdit]),
        ("cargo clippy --fix --allow-dirty", &[FileEdit]),
        ("cargo clippy --all-targets -- -D warnings", &[]),
        ("rustfmt src/lib.rs", &[FileEdit]),
        ("rustfmt --check src/lib.rs", &[]),
        ("gofmt -w .", &[FileEdit]),
        ("gofmt -l .", &[]),
        ("go fmt ./...", &[FileEdit]),
        ("go vet ./...", &[]),
        ("cat ~/.config/gh/hosts.yml", &[ConfigInspection]),
        ("tea login list", &[ConfigInspection]),
        ("gh auth switch --user bot", &[ProfileActivation]),
        ("export GITEA_TOKEN=abc", &[ProfileActivation]),
        ("GH_TOKEN=x gh pr view 4", &[]),
        ("gh pr merge 4 --squash", &[ForgeMerge]),
        ("gh pr review 4 --approve", &[ForgeReview { approve: true }]),
        (
            "gh pr review 4 --comment -b hi",
            &[ForgeReview { approve: false }],
        ),
        ("gh api repos/o/r/pulls/4/merge -X PUT", &[ForgeMerge]),
        ("gh api repos/o/r/pulls/4", &[]),
        (
            "curl -X POST https://git.example/api/v1/repos/o/r/pulls/4/reviews -d '{\"event\":\"APPROVED\"}'",
            &[ForgeReview { approve: true }],
        ),
        ("tea pr merge 4", &[ForgeMerge]),
        ("bash -c 'git merge x'", &[LocalMerge]),
        // Every spelling of an HTTP method, for gh api and plain HTTP clients alike.
        ("gh api -XPUT repos/o/r/pulls/4/merge", &[ForgeMerge]),
        ("gh api --method=PUT repos/o/r/pulls/4/merge", &[ForgeMerge]),
        ("gh api --method GET repos/o/r/pulls/4/merge", &[]),
        (
            "wget --method=PUT https://api.github.com/repos/o/r/pulls/1/merge",
            &[ForgeMerge],
        ),
        (
            "curl --request=PUT https://git.example/api/v1/repos/o/r/pulls/4/merge",
            &[ForgeMerge],
        ),
        (
            "curl -XGET https://git.example/api/v1/repos/o/r/pulls/4/merge",
            &[],
        ),
        // `eval` runs its words as a command line.
        ("eval 'gh pr merge 42'", &[ForgeMerge]),
        ("eval git merge feature", &[LocalMerge]),
        ("eval 'git push origin main'", &[Push]),
        ("eval 'git status'", &[]),
        ("gh release create v1", &[ForgeWrite]),
        ("gh release list", &[]),
        // Wrappers with their own options, compound commands, substitutions.
        ("nice -n 5 git push", &[Push]),
        ("sudo -u bob git push origin main", &[Push]),
        ("env -i PATH=/bin git push", &[Push]),
        ("env -u X gh pr merge 42", &[ForgeMerge]),
        ("xargs -0 gh pr merge", &[ForgeMerge]),
        ("timeout 30 git push", &[Push]),
        ("timeout -s KILL 30s gh pr merge 4", &[ForgeMerge]),
        ("stdbuf -oL git push", &[Push]),
        ("setsid git push", &[Push]),
        ("if true; then git push origin main; fi", &[Push]),
        ("for i in 1; do gh pr merge 42; done", &[ForgeMerge]),
        ("echo `gh pr merge 42`", &[ForgeMerge]),
        ("x=$(gh pr merge 42)", &[ForgeMerge]),
        (
            "glab api -X PUT projects/1/merge_requests/3/merge",
            &[ForgeMerge],
        ),
        ("glab api projects/1/merge_requests/3", &[]),
        ("timeout 30 git status", &[]),
        ("echo $($($(gh pr merge 42)))", &[ForgeMerge]),
    ];
    for (cmd, expected) in table {
        assert_eq!(classify_command(cmd), *expected, "{cmd}");
    }
}

#[test]
fn tools_are_classified_by_name_words() {
    use Kind::*;
    let table: &[(&str, serde_json::Value, Option<Kind>)] = &[
        ("mcp__gitea__get_pull_request", json!({}), None),
        ("mcp__gitea__list_pull_reviews", json!({}), None),
        ("merge_pull_request", json!({}), Some(ForgeMerge)),
        (
            "mcp__gitea__create_pull_review",
            json!({"event": "APPROVED"}),
            Some(ForgeReview { approve: true }),
        ),
        (
            "mcp__github__createPullRequestReview",
            json!({"event": "COMMENT"}),
            Some(ForgeReview { approve: false }),
        ),
        (
            "mcp__gitea__create_issue_comment",
            json!({}),
            Some(ForgeWrite),
        ),
        ("Write", json!({"file_path": "x"}), Some(FileEdit)),
        (
            "str_replace_based_edit_tool",
            json!({"command": "view"}),
            None,
        ),
        ("mcp__github__get_mergeable_state", json!({}), None),
        ("mcp__github__pull_request_read", json!({}), None),
        (
            "mcp__gitlab__create_merge_request",
            json!({}),
            Some(ForgeWrite),
        ),
        (
            "mcp__github__pull_request_review_write",
            json!({"event": "APPROVE"}),
            Some(ForgeReview { approve: true }),
        ),
        ("gitea_activate_profile", json!({}), Some(ProfileActivation)),
        (
            "mcp__gitea__activate_profile",
            json!({}),
            Some(ProfileActivation),
        ),
        (
            "mcp__forge__switch_account",
            json!({}),
            Some(ProfileActivation),
        ),
        ("mcp__gitea__get_profile", json!({}), None),
        ("mcp__git__git_merge", json!({}), Some(LocalMerge)),
        ("mcp__git__git_checkout", json!({}), Some(WorktreeChange)),
        ("mcp__git__git_commit", json!({}), Some(RefUpdate)),
        (
            "mcp__git__git_reset",
            json!({"mode": "hard"}),
            Some(MergeRestore),
        ),
        ("mcp__git__git_status", json!({}), None),
        ("git_log", json!({}), None),
        (
            "mcp__filesystem__write_file",
            json!({"path": "/w/a"}),
            Some(FileEdit),
        ),
        ("mcp__gitea__close_issue", json!({}), Some(ForgeWrite)),
        (
            "Read",
            json!({"file_path": "/root/.config/gh/hosts.yml"}),
            Some(ConfigInspection),
        ),
        ("Read", json!({"file_path": "/src/w/src/main.rs"}), None),
    ];
    for (name, args, expected) in table {
        assert_eq!(classify_tool(name, args), *expected, "{name}");
    }
}

#[test]
fn configuration_paths_are_classified_by_shape() {
    let table: &[(&str, Option<&str>)] = &[
        ("~/.netrc", Some("credentials")),
        ("/home/ci/.git-credentials", Some("credentials")),
        ("./deploy/gitea_token.txt", Some("credentials")),
        ("src/token.rs", None),
        (
            "~/.config/tea/config.yml",
            Some("forge-client configuration"),
        ),
        ("hosts.yml", Some("forge-client configuration")),
        ("/root/.claude/settings.json", Some("agent configuration")),
        (".mcp.json", Some("agent configuration")),
        ("~/.gitconfig", Some("git configuration")),
        (".git/config", Some("git configuration")),
        (".env.local", Some("environment file")),
        ("~/.npmrc", Some("package-registry configuration")),
        ("~/.bash_profile", Some("profile")),
        ("~/.config/some-tool/x.toml", Some("home configuration")),
        ("/root/.cache/thing", Some("home configuration")),
        (".github/workflows/ci.yml", None),
        ("README.md", None),
        ("token", None),
    ];
    for (path, class) in table {
        assert_eq!(config_path_class(path), *class, "{path}");
    }
    assert_eq!(classify_command("grep -rn token src/"), []);
    assert_eq!(
        classify_command("cat ~/.config/gh/hosts.yml"),
        [Kind::ConfigInspection]
    );
}

#[test]
fn direct_approve_or_merge_replays_are_recognised() {
    let yes = [
        "gh pr merge 42 --squash",
        "gh pr review 42 --approve",
        "tea pulls approve 42",
        "git merge --ff-only origin/feature",
        "merge_pull_request(owner=\"acme\", repo=\"widgets\", index=42)",
        "mcp__gitea__create_pull_review(event=APPROVED)",
    ];
    let no = [
        "vouch validate-report final-report.md",
        "gh pr view 42",
        "git merge --abort",
        "vouch review --base main --head merge",
        "mcp__gitea__get_pull_request(index=42)",
    ];
    for c in yes {
        assert!(is_direct_approve_or_merge(c), "{c}");
    }
    for c in no {
        assert!(!is_direct_approve_or_merge(c), "{c}");
    }
}

#[test]
fn pushes_to_a_trunk_land_a_change() {
    let table = [
        ("git push origin pr-88:main", true),
        ("git push origin HEAD:refs/heads/master", true),
        ("git push --force origin +topic:trunk", true),
        ("git push origin main", true),
        ("git push origin review/88", false),
        ("git push origin main:review-88", false),
        ("git push", false),
    ];
    for (cmd, lands) in table {
        assert_eq!(is_direct_approve_or_merge(cmd), lands, "{cmd}");
    }
}
