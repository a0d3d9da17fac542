//! Table tests of the classification.

use super::*;
use serde_json::json;

/// A test run of `runner` over its whole suite, in its working directory.
fn run(runner: &str) -> Effect {
    Effect::TestRun {
        runner: runner.to_owned(),
        scope: Scope::Whole,
        dir: None,
    }
}

/// A file edit of `paths`.
fn edit(paths: &[&str]) -> Effect {
    Effect::Edit(paths.iter().map(|p| (*p).to_owned()).collect())
}

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
    let merge = Some(Effect::FORGE_MERGE);
    let write = Some(Effect::FORGE_WRITE);
    let approve = Some(Effect::APPROVAL);
    let table: &[(&str, Option<Effect>)] = &[
        (
            "gh api graphql -f 'query=query { repository(owner: \"o\", name: \"r\") { issue(number: 1) { state } } }'",
            None,
        ),
        ("gh api graphql -f 'query={ viewer { login } }'", None),
        (
            "gh api graphql -f 'query=mutation { mergePullRequest(input: {pullRequestId: \"x\"}) { clientMutationId } }'",
            merge.clone(),
        ),
        (
            "gh api graphql -f 'query=mutation { addPullRequestReview(input: {event: APPROVE}) { clientMutationId } }'",
            approve.clone(),
        ),
        (
            "gh api graphql -f 'query=mutation { closeIssue(input: {issueId: \"x\"}) { clientMutationId } }'",
            write.clone(),
        ),
        ("gh api repos/o/r/pulls/4", None),
        ("gh api -X PUT repos/o/r/pulls/4/merge", merge.clone()),
        (
            "gh api repos/o/r/issues/4/comments -f body=hi",
            write.clone(),
        ),
        ("tea pulls approve 4", approve.clone()),
        ("tea pr merge 4", merge.clone()),
        ("tea comment 4 looks-good", write.clone()),
        ("tea issues close 4", write.clone()),
        ("tea pr list", None),
        ("glab mr approve 4", approve.clone()),
        ("glab mr merge 4", merge.clone()),
        ("glab mr note 4 -m hi", write.clone()),
        ("glab mr view 4", None),
        (
            "glab api -X PUT projects/1/merge_requests/4/merge",
            merge.clone(),
        ),
        ("glab api projects/1/merge_requests/4", None),
    ];
    for (cmd, expected) in table {
        let effects = classify_command(cmd);
        assert_eq!(effects.first(), expected.as_ref(), "{cmd}");
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
    use Effect::*;
    let table: &[(&str, Vec<Effect>)] = &[
        ("git status --porcelain", vec![]),
        ("git -C ../wt merge --no-ff origin/main", vec![Merge]),
        ("git merge --abort", vec![Effect::MERGE_RESTORE]),
        ("git merge-base --is-ancestor a b", vec![]),
        ("git pull --ff-only", vec![Merge, Effect::REF_UPDATE]),
        (
            "git worktree add ../wt abc123",
            vec![Effect::WORKTREE_ADD_REMOVE],
        ),
        ("git worktree list", vec![]),
        ("git fetch origin", vec![Effect::REF_UPDATE]),
        ("git branch --show-current", vec![]),
        ("git branch -D old", vec![Effect::REF_UPDATE]),
        ("git reset --hard abc", vec![Effect::MERGE_RESTORE]),
        ("git checkout abc123", vec![Effect::WORKTREE_CHANGE]),
        ("git push origin HEAD", vec![Effect::PUSH]),
        (
            "git config --get remote.origin.url",
            vec![Effect::CONFIG_QUERY],
        ),
        ("cargo test --workspace", vec![run("cargo")]),
        ("cd wt && npm run test:unit", vec![run("npm")]),
        ("python -m pytest -q", vec![run("pytest")]),
        ("python -m unittest", vec![run("unittest")]),
        ("python -c 'import pytest'", vec![]),
        ("python script.py -m pytest", vec![]),
        // Test runners started by a launcher.
        ("npx jest", vec![run("jest")]),
        ("npx vitest run", vec![run("vitest")]),
        ("npx -y -p jest jest --ci", vec![run("jest")]),
        ("bunx vitest", vec![run("vitest")]),
        ("uv run pytest", vec![run("pytest")]),
        ("uv run python -m pytest", vec![run("pytest")]),
        ("uvx pytest", vec![run("pytest")]),
        ("poetry run pytest", vec![run("pytest")]),
        ("pipenv run pytest", vec![run("pytest")]),
        ("hatch run pytest", vec![run("pytest")]),
        ("hatch test", vec![run("hatch")]),
        ("pdm run pytest", vec![run("pytest")]),
        ("pnpm exec jest", vec![run("jest")]),
        ("yarn dlx jest", vec![run("jest")]),
        ("npm exec -- vitest run", vec![run("vitest")]),
        ("tox -e py312", vec![run("tox")]),
        ("nox -s tests", vec![run("nox")]),
        ("bun test", vec![run("bun")]),
        ("npx prettier --check .", vec![]),
        ("uv run ruff check", vec![]),
        ("make check", vec![run("make")]),
        ("echo x > notes.md", vec![edit(&["notes.md"])]),
        ("sed -i s/a/b/ f.rs", vec![edit(&["f.rs"])]),
        ("sed -n 1,5p f.rs", vec![]),
        ("sed -Ei 's/a/b/' f.rs", vec![edit(&["f.rs"])]),
        ("sed -ni p f.rs", vec![edit(&["f.rs"])]),
        ("sed -i.bak s/a/b/ f.rs", vec![edit(&["f.rs"])]),
        ("sed --in-place s/a/b/ f.rs", vec![edit(&["f.rs"])]),
        ("sed --in-place=.orig s/a/b/ f.rs", vec![edit(&["f.rs"])]),
        ("sed -e s/a/b/ -i f.rs", vec![edit(&["f.rs"])]),
        ("sed -E -n 's/i/x/p' f.rs", vec![]),
        ("sed -e i f.rs", vec![]),
        ("perl -pi -e 's/a/b/' f.rs", vec![edit(&["f.rs"])]),
        ("perl -i -pe 's/a/b/' f.rs", vec![edit(&["f.rs"])]),
        ("perl -0pi -e 's/a/b/' f.rs", vec![edit(&["f.rs"])]),
        ("perl -pie 's/a/b/' f.rs", vec![edit(&["f.rs"])]),
        ("perl -ne 'print if /i/' f.rs", vec![]),
        ("perl -Ilib -e 'print 1'", vec![]),
        // In-place edits through find, multi-call binaries, formatters and fixers.
        (
            "find . -name '*.rs' -exec sed -i s/a/b/ {} +",
            vec![edit(&[".", "{}"])],
        ),
        (
            "find src -execdir sed -i s/a/b/ {} \\;",
            vec![edit(&["src", "{}"])],
        ),
        ("find . -name '*.orig' -delete", vec![edit(&["."])]),
        ("find . -name '*.rs' -exec grep -l x {} +", vec![]),
        (
            "find . -exec find {} -exec sed -i s/a/b/ {} + ;",
            vec![edit(&[".", "{}"])],
        ),
        ("busybox sed -i s/a/b/ f.rs", vec![edit(&["f.rs"])]),
        ("toybox sed -i s/a/b/ f.rs", vec![edit(&["f.rs"])]),
        ("busybox sed -n p f.rs", vec![]),
        ("cargo fmt", vec![edit(&[])]),
        ("cargo +nightly fmt --all", vec![edit(&[])]),
        ("cargo fmt --all -- --check", vec![]),
        ("cargo fmt --check", vec![]),
        ("cargo fix --allow-dirty", vec![edit(&[])]),
        ("cargo clippy --fix --allow-dirty", vec![edit(&[])]),
        ("cargo clippy --all-targets -- -D warnings", vec![]),
        ("rustfmt src/lib.rs", vec![edit(&["src/lib.rs"])]),
        ("rustfmt --check src/lib.rs", vec![]),
        ("gofmt -w .", vec![edit(&["."])]),
        ("gofmt -l .", vec![]),
        ("go fmt ./...", vec![edit(&[])]),
        ("go vet ./...", vec![]),
        (
            "cat ~/.config/gh/hosts.yml",
            vec![ConfigRead(ConfigClass::ForgeClient)],
        ),
        ("tea login list", vec![Effect::CONFIG_QUERY]),
        ("gh auth switch --user bot", vec![ProfileActivation]),
        ("export GITEA_TOKEN=abc", vec![ProfileActivation]),
        ("GH_TOKEN=x gh pr view 4", vec![]),
        ("gh pr merge 4 --squash", vec![Effect::FORGE_MERGE]),
        ("gh pr review 4 --approve", vec![Effect::APPROVAL]),
        ("gh pr review 4 --comment -b hi", vec![Effect::REVIEW]),
        (
            "gh api repos/o/r/pulls/4/merge -X PUT",
            vec![Effect::FORGE_MERGE],
        ),
        ("gh api repos/o/r/pulls/4", vec![]),
        (
            "curl -X POST https://git.example/api/v1/repos/o/r/pulls/4/reviews -d '{\"event\":\"APPROVED\"}'",
            vec![Effect::APPROVAL],
        ),
        ("tea pr merge 4", vec![Effect::FORGE_MERGE]),
        ("bash -c 'git merge x'", vec![Merge]),
        // Every spelling of an HTTP method, for gh api and plain HTTP clients alike.
        (
            "gh api -XPUT repos/o/r/pulls/4/merge",
            vec![Effect::FORGE_MERGE],
        ),
        (
            "gh api --method=PUT repos/o/r/pulls/4/merge",
            vec![Effect::FORGE_MERGE],
        ),
        ("gh api --method GET repos/o/r/pulls/4/merge", vec![]),
        (
            "wget --method=PUT https://api.github.com/repos/o/r/pulls/1/merge",
            vec![Effect::FORGE_MERGE],
        ),
        (
            "curl --request=PUT https://git.example/api/v1/repos/o/r/pulls/4/merge",
            vec![Effect::FORGE_MERGE],
        ),
        (
            "curl -XGET https://git.example/api/v1/repos/o/r/pulls/4/merge",
            vec![],
        ),
        // `eval` runs its words as a command line.
        ("eval 'gh pr merge 42'", vec![Effect::FORGE_MERGE]),
        ("eval git merge feature", vec![Merge]),
        ("eval 'git push origin main'", vec![Effect::PUSH]),
        ("eval 'git status'", vec![]),
        ("gh release create v1", vec![Effect::FORGE_WRITE]),
        ("gh release list", vec![]),
        // Wrappers with their own options, compound commands, substitutions.
        ("nice -n 5 git push", vec![Effect::PUSH]),
        ("sudo -u bob git push origin main", vec![Effect::PUSH]),
        ("env -i PATH=/bin git push", vec![Effect::PUSH]),
        ("env -u X gh pr merge 42", vec![Effect::FORGE_MERGE]),
        ("xargs -0 gh pr merge", vec![Effect::FORGE_MERGE]),
        ("timeout 30 git push", vec![Effect::PUSH]),
        (
            "timeout -s KILL 30s gh pr merge 4",
            vec![Effect::FORGE_MERGE],
        ),
        ("stdbuf -oL git push", vec![Effect::PUSH]),
        ("setsid git push", vec![Effect::PUSH]),
        ("if true; then git push origin main; fi", vec![Effect::PUSH]),
        (
            "for i in 1; do gh pr merge 42; done",
            vec![Effect::FORGE_MERGE],
        ),
        ("echo `gh pr merge 42`", vec![Effect::FORGE_MERGE]),
        ("x=$(gh pr merge 42)", vec![Effect::FORGE_MERGE]),
        (
            "glab api -X PUT projects/1/merge_requests/3/merge",
            vec![Effect::FORGE_MERGE],
        ),
        ("glab api projects/1/merge_requests/3", vec![]),
        ("timeout 30 git status", vec![]),
        ("echo $($($(gh pr merge 42)))", vec![Effect::FORGE_MERGE]),
    ];
    for (cmd, expected) in table {
        assert_eq!(classify_command(cmd), *expected, "{cmd}");
    }
}

#[test]
fn tools_are_classified_by_name_words() {
    use Effect::*;
    let table: &[(&str, serde_json::Value, Option<Effect>)] = &[
        ("mcp__gitea__get_pull_request", json!({}), None),
        ("mcp__gitea__list_pull_reviews", json!({}), None),
        ("merge_pull_request", json!({}), Some(Effect::FORGE_MERGE)),
        (
            "mcp__gitea__create_pull_review",
            json!({"event": "APPROVED"}),
            Some(Effect::APPROVAL),
        ),
        (
            "mcp__github__createPullRequestReview",
            json!({"event": "COMMENT"}),
            Some(Effect::REVIEW),
        ),
        (
            "mcp__gitea__create_issue_comment",
            json!({}),
            Some(Effect::FORGE_WRITE),
        ),
        (
            "Write",
            json!({"file_path": "x"}),
            Some(Edit(vec!["x".into()])),
        ),
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
            Some(Effect::FORGE_WRITE),
        ),
        (
            "mcp__github__pull_request_review_write",
            json!({"event": "APPROVE"}),
            Some(Effect::APPROVAL),
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
        ("mcp__git__git_merge", json!({}), Some(Merge)),
        (
            "mcp__git__git_checkout",
            json!({}),
            Some(Effect::WORKTREE_CHANGE),
        ),
        ("mcp__git__git_commit", json!({}), Some(Effect::REF_UPDATE)),
        (
            "mcp__git__git_reset",
            json!({"mode": "hard"}),
            Some(Effect::MERGE_RESTORE),
        ),
        ("mcp__git__git_status", json!({}), None),
        ("git_log", json!({}), None),
        (
            "mcp__filesystem__write_file",
            json!({"path": "/w/a"}),
            Some(Edit(vec!["/w/a".into()])),
        ),
        (
            "mcp__gitea__close_issue",
            json!({}),
            Some(Effect::FORGE_WRITE),
        ),
        (
            "Read",
            json!({"file_path": "/root/.config/gh/hosts.yml"}),
            Some(ConfigRead(ConfigClass::ForgeClient)),
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
        assert_eq!(
            config_path_class(path).map(ConfigClass::as_str),
            *class,
            "{path}"
        );
    }
    assert_eq!(classify_command("grep -rn token src/"), []);
    assert_eq!(
        classify_command("cat ~/.config/gh/hosts.yml"),
        [Effect::ConfigRead(ConfigClass::ForgeClient)]
    );
    // A query is classed by the first configuration path among its words.
    assert_eq!(
        classify_command("git config --file ~/.gitconfig --list"),
        [Effect::ConfigRead(ConfigClass::Git)]
    );
    assert_eq!(classify_command("env"), [Effect::CONFIG_QUERY]);
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
