//! Table tests of the effect tables, one row per tool-family case with its expected
//! effects beside it, and properties of the classification as a whole.

use super::*;
use crate::classify::table::lookup;
use proptest::prelude::*;
use serde_json::json;

fn run_in(runner: &str, scope: Scope, dir: Option<&str>) -> Effect {
    Effect::TestRun {
        runner: runner.to_owned(),
        scope,
        dir: dir.map(str::to_owned),
    }
}

fn filtered(option: &str) -> Scope {
    Scope::Filtered(TestFilter::argument(option))
}

fn edit(paths: &[&str]) -> Effect {
    Effect::Edit(paths.iter().map(|p| (*p).to_owned()).collect())
}

/// Each command of `table` has the effects beside it.
fn assert_effects(table: &[(&str, Vec<Effect>)]) {
    for (cmd, expected) in table {
        assert_eq!(classify_command(cmd), *expected, "{cmd}");
    }
}

#[test]
fn git_forge_and_http_commands_map_to_their_effects() {
    assert_effects(&[
        // git: subcommand rows and their conditions.
        ("git rebase --abort", vec![Effect::MERGE_RESTORE]),
        (
            "git cherry-pick abc",
            vec![Effect::WORKTREE_CHANGE, Effect::REF_UPDATE],
        ),
        (
            "git switch -c topic",
            vec![Effect::WORKTREE_CHANGE, Effect::REF_UPDATE],
        ),
        ("git stash list", vec![]),
        ("git stash", vec![Effect::WORKTREE_CHANGE]),
        ("git apply --check fix.patch", vec![]),
        ("git apply fix.patch", vec![Effect::EDIT]),
        ("git tag -l", vec![]),
        ("git tag v1", vec![Effect::REF_UPDATE]),
        ("git branch --format=%(refname)", vec![]),
        ("git symbolic-ref HEAD", vec![]),
        (
            "git symbolic-ref HEAD refs/heads/x",
            vec![Effect::REF_UPDATE],
        ),
        ("git config user.name", vec![Effect::CONFIG_QUERY]),
        ("git config user.name bot", vec![Effect::ProfileActivation]),
        // Forge CLIs and their API calls.
        ("gh pr review 4 -a", vec![Effect::APPROVAL]),
        ("gh issue close 4", vec![Effect::FORGE_WRITE]),
        ("gh auth status", vec![Effect::CONFIG_QUERY]),
        (
            "gh config set git_protocol ssh",
            vec![Effect::ProfileActivation],
        ),
        ("tea pr reject 4", vec![Effect::REVIEW]),
        ("tea login", vec![Effect::CONFIG_QUERY]),
        ("tea login use bot", vec![Effect::ProfileActivation]),
        ("glab auth login", vec![Effect::ProfileActivation]),
        ("glab issue close 4", vec![Effect::FORGE_WRITE]),
        // HTTP clients against forge APIs.
        (
            "curl -X POST https://f/api/v1/repos/o/r/issues/4/comments -d x",
            vec![Effect::FORGE_WRITE],
        ),
        ("http GET https://f/api/v1/repos/o/r/pulls/4", vec![]),
    ]);
}

#[test]
fn runners_editors_and_profiles_map_to_their_effects() {
    assert_effects(&[
        // Test runners: runner, scope and directory.
        (
            "pytest -k slow",
            vec![run_in("pytest", filtered("-k"), None)],
        ),
        (
            "cargo test -p vouch-core",
            vec![run_in("cargo", Scope::Package("vouch-core".into()), None)],
        ),
        (
            "make -C /src/w test",
            vec![run_in("make", Scope::Whole, Some("/src/w"))],
        ),
        (
            "bash -c 'npx jest -t parses'",
            vec![run_in("jest", filtered("-t"), None)],
        ),
        ("mvn verify", vec![run_in("mvn", Scope::Whole, None)]),
        (
            "bundle exec rspec",
            vec![run_in("bundle", Scope::Whole, None)],
        ),
        // Editors and in-place tools name what they write.
        ("cp a.rs /src/w/b.rs", vec![edit(&["/src/w/b.rs"])]),
        ("touch a b", vec![edit(&["a", "b"])]),
        ("tee -a", vec![]),
        (
            "perl -i -pe s/a/b/ x.rs y.rs",
            vec![edit(&["x.rs", "y.rs"])],
        ),
        (
            "find /src/w -name x -exec cp {} /tmp/out \\;",
            vec![edit(&["/src/w", "/tmp/out"])],
        ),
        ("sed -i s/a/b/ f.rs > log", vec![edit(&["log", "f.rs"])]),
        (
            "dd if=/dev/zero of=img",
            vec![edit(&["if=/dev/zero", "of=img"])],
        ),
        // Profiles and configuration.
        ("source ~/.profile", vec![Effect::ProfileActivation]),
        ("printenv", vec![Effect::CONFIG_QUERY]),
        ("env", vec![Effect::CONFIG_QUERY]),
        ("mytool profile use bot", vec![Effect::ProfileActivation]),
    ]);
}

#[test]
fn the_session_environment_scopes_a_test_run() {
    let env = [("PYTEST_ADDOPTS".to_owned(), "-k fast".to_owned())];
    let scope =
        |line: &str, env: &[(String, String)]| match classify_line(line, env).into_iter().next() {
            Some(Effect::TestRun { scope, .. }) => scope,
            other => panic!("{line}: {other:?}"),
        };
    assert_eq!(scope("pytest", &[]), Scope::Whole);
    assert!(matches!(scope("pytest", &env), Scope::Filtered(_)));
    assert!(matches!(
        scope("PYTEST_ADDOPTS='-m x' pytest", &[]),
        Scope::Filtered(_)
    ));
}

#[test]
fn local_git_tools_map_through_their_verb_table() {
    let table = [
        (
            "mcp__git__git_merge",
            json!({"abort": true}),
            Some(Effect::MERGE_RESTORE),
        ),
        ("mcp__git__git_pull", json!({}), Some(Effect::Merge)),
        (
            "mcp__git__git_reset",
            json!({"hard": true}),
            Some(Effect::MERGE_RESTORE),
        ),
        (
            "mcp__git__git_reset",
            json!({}),
            Some(Effect::WORKTREE_CHANGE),
        ),
        (
            "mcp__git__git_create_branch",
            json!({}),
            Some(Effect::REF_UPDATE),
        ),
        (
            "mcp__git__git_worktree_add",
            json!({}),
            Some(Effect::WORKTREE_ADD_REMOVE),
        ),
        ("mcp__git__git_worktree_list", json!({}), None),
        ("mcp__git__git_push", json!({}), Some(Effect::PUSH)),
        ("mcp__git__git_diff", json!({}), None),
    ];
    for (name, args, expected) in &table {
        assert_eq!(classify_tool(name, args), *expected, "{name}");
    }
}

#[test]
fn other_tools_map_through_their_word_table() {
    let table = [
        ("mcp__gitea__get_pull_request", json!({}), None),
        (
            "gitea_activate_profile",
            json!({}),
            Some(Effect::ProfileActivation),
        ),
        ("mcp__github__pull_request_read", json!({}), None),
        ("merge_pull_request", json!({}), Some(Effect::FORGE_MERGE)),
        (
            "mcp__forge__update_merge_status",
            json!({}),
            Some(Effect::FORGE_WRITE),
        ),
        (
            "mcp__forge__approve_pull_request",
            json!({}),
            Some(Effect::APPROVAL),
        ),
        (
            "mcp__gitea__create_pull_review",
            json!({"state": "approved"}),
            Some(Effect::APPROVAL),
        ),
        (
            "mcp__gitea__create_pull_review",
            json!({"event": "REQUEST_CHANGES"}),
            Some(Effect::REVIEW),
        ),
        ("mcp__gitea__pull_review", json!({"event": "APPROVE"}), None),
        (
            "mcp__gitlab__create_merge_request",
            json!({}),
            Some(Effect::FORGE_WRITE),
        ),
        (
            "mcp__gitea__close_issue",
            json!({}),
            Some(Effect::FORGE_WRITE),
        ),
        ("mcp__search__frobnicate", json!({}), None),
    ];
    for (name, args, expected) in &table {
        assert_eq!(classify_tool(name, args), *expected, "{name}");
    }
}

/// Whether row `i` of `rows` follows an unconditional row whose words cover its own,
/// so that it can never decide.
fn shadowed(rows: &[table::Row], i: usize) -> bool {
    let row = &rows[i];
    row.words.iter().all(|w| !w.is_empty())
        && rows[..i].iter().any(|e| {
            e.when.is_empty()
                && e.words.len() <= row.words.len()
                && e.words
                    .iter()
                    .zip(row.words)
                    .all(|(a, b)| a.is_empty() || b.iter().all(|w| a.contains(w)))
        })
}

/// Every row of every table can decide some command: none is shadowed by an earlier
/// row (and the check does find a shadowed row).
#[test]
fn every_table_row_is_reachable() {
    let tables: [(&str, &[table::Row]); 8] = [
        ("git", GIT),
        ("gh", GH),
        ("tea", TEA),
        ("glab", GLAB),
        ("programs", PROGRAMS),
        ("runners", TEST_RUNNERS),
        ("git tools", GIT_TOOL_VERBS),
        ("other tools", TOOL_VERBS),
    ];
    for (name, rows) in tables {
        for i in 0..rows.len() {
            assert!(!shadowed(rows, i), "{name} row {i} can never decide");
        }
    }
    let later_merge = [
        table::row(&[&["merge", "pull"]], table::ALWAYS, table::NOTHING),
        table::row(
            &[&["merge"]],
            &[table::Cond::Word(&["--abort"])],
            table::NOTHING,
        ),
    ];
    assert!(shadowed(&later_merge, 1));
    assert!(lookup(GIT, &["status"]).is_none());
}

/// Commands without single quotes (so `bash -c '…'` can wrap them) and with no
/// per-directory effect of `cd`.
const POOL: &[&str] = &[
    "git status",
    "git merge origin/main",
    "git merge --abort",
    "git pull --ff-only",
    "git worktree add ../wt abc",
    "git push origin HEAD",
    "git config --get user.name",
    "git apply fix.patch",
    "gh pr merge 4",
    "gh pr review 4 --approve",
    "gh api -X PUT repos/o/r/pulls/4/merge",
    "tea comment 4 hi",
    "glab mr approve 4",
    "cargo test -p x",
    "pytest -k slow tests",
    "npx jest -t parses",
    "uv run pytest",
    "make -C /src/w test",
    "sed -i s/a/b/ f.rs",
    "cp a.rs b.rs",
    "cargo fmt",
    "cat ~/.config/gh/hosts.yml",
    "gh auth switch --user bot",
    "echo hi",
];

/// Effects compared as a set: order aside, and an edit's paths as a set.
fn as_set(effects: Vec<Effect>) -> Vec<String> {
    let mut out: Vec<String> = effects
        .into_iter()
        .map(|e| match e {
            Effect::Edit(mut paths) => {
                paths.sort();
                format!("{:?}", Effect::Edit(paths))
            }
            e => format!("{e:?}"),
        })
        .collect();
    out.sort();
    out
}

proptest! {
    /// A command wrapped in a shell, a wrapper, a launcher-free environment or a
    /// compound keyword does what it does unwrapped.
    #[test]
    fn wrapping_a_command_keeps_its_effects(i in 0..POOL.len(), w in 0..7usize) {
        let cmd = POOL[i];
        let wrapped = match w {
            0 => format!("bash -c '{cmd}'"),
            1 => format!("env X=1 {cmd}"),
            2 => format!("nice -n 5 {cmd}"),
            3 => format!("timeout 30 {cmd}"),
            4 => format!("sudo -u bob {cmd}"),
            5 => format!("if true; then {cmd}; fi"),
            _ => format!("eval {cmd}"),
        };
        prop_assert_eq!(classify_command(&wrapped), classify_command(cmd), "{}", wrapped);
    }

    /// A line of independent commands does what its commands do, in any order.
    #[test]
    fn joining_commands_unites_their_effects(
        picks in proptest::collection::vec(0..POOL.len(), 1..5),
        sep in prop::sample::select(vec![" && ", "; ", " || ", "\n"]),
    ) {
        let cmds: Vec<&str> = picks.iter().map(|&i| POOL[i]).collect();
        let mut each = Vec::new();
        for c in &cmds {
            for e in classify_command(c) {
                add_effect(&mut each, e);
            }
        }
        let joined = classify_command(&cmds.join(sep));
        let mut reversed: Vec<&str> = cmds.clone();
        reversed.reverse();
        let backwards = classify_command(&reversed.join(sep));
        prop_assert_eq!(as_set(joined.clone()), as_set(each));
        prop_assert_eq!(as_set(joined), as_set(backwards));
    }
}

/// Jujutsu (`jj`), a VCS run beside git, through its own table: its pushes are pushes,
/// its commit and bookmark commands change the working copy or refs, its reads read.
#[test]
fn jj_commands_map_through_their_table() {
    let both = || vec![Effect::WORKTREE_CHANGE, Effect::REF_UPDATE];
    assert_effects(&[
        ("jj git push", vec![Effect::PUSH]),
        ("jj git push --bookmark topic", vec![Effect::PUSH]),
        ("jj -R /src/w git push -c @-", vec![Effect::PUSH]),
        ("jj --no-pager git push --all", vec![Effect::PUSH]),
        ("jj git push --dry-run", vec![]),
        ("jj git fetch", vec![Effect::REF_UPDATE]),
        ("jj new main", both()),
        ("jj commit -m fix", both()),
        ("jj describe -m fix", both()),
        ("jj squash", both()),
        ("jj rebase -d main", both()),
        ("jj abandon @", both()),
        ("jj bookmark set topic -r @-", vec![Effect::REF_UPDATE]),
        ("jj bookmark create topic", vec![Effect::REF_UPDATE]),
        ("jj bookmark move topic --to @", vec![Effect::REF_UPDATE]),
        ("jj bookmark delete topic", vec![Effect::REF_UPDATE]),
        ("jj bookmark list", vec![]),
        ("jj log -r ::@", vec![]),
        ("jj status", vec![]),
        ("jj diff --git", vec![]),
        ("jj show @-", vec![]),
        ("bash -c 'jj git push'", vec![Effect::PUSH]),
    ]);
    for i in 0..JJ.len() {
        assert!(!shadowed(JJ, i), "jj row {i} can never decide");
    }
}
