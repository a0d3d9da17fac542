//! Table tests of the session model.

use super::*;
use crate::transcript::parse_transcript;

fn session(lines: &str) -> Session {
    Session::build(&parse_transcript(lines).unwrap())
}

#[test]
fn paths_resolve_and_normalise() {
    assert_eq!(resolve(Some("/src/w"), "../w-pr"), Some("/src/w-pr".into()));
    assert_eq!(resolve(None, "rel"), None);
    assert_eq!(normalize_path("/a/./b//c/"), "/a/b/c");
}

#[test]
fn directories_follow_cwd_cd_and_git_c() {
    let s = session(
        r#"{"seq":1,"kind":"command","command":"git worktree add ../wt c0ffee1","cwd":"/src/r"}
{"seq":2,"kind":"command","command":"cd ../wt && git merge --no-commit origin/main","cwd":"/src/r"}
{"seq":3,"kind":"command","command":"git -C /src/wt merge --abort","cwd":"/src/r"}
{"seq":4,"kind":"command","command":"echo x > notes.txt","cwd":"/src/wt"}
{"seq":5,"kind":"command","command":"pytest -q","cwd":"/src/wt","result":{"exitCode":0,"output":"3 passed, 1 skipped in 0.1s"}}
{"seq":6,"kind":"command","command":"pytest -q","cwd":"/src/r"}"#,
    );
    assert_eq!(s.place("/src/wt"), Place::Isolated);
    assert_eq!(s.place("/src/r"), Place::Main);
    let routes: Vec<(u64, Route, Effect)> = s
        .actions
        .iter()
        .map(|a| (a.seq, a.route, a.effect.clone()))
        .collect();
    assert!(routes.contains(&(2, Route::CdAnd, Effect::Merge)));
    assert!(routes.contains(&(3, Route::GitC, Effect::MERGE_RESTORE)));
    let run = &s.tests[0];
    assert_eq!(run.dir.as_deref(), Some("/src/wt"));
    assert_eq!(run.head.as_deref(), Some("c0ffee1"));
    assert_eq!(run.pending.len(), 1, "{:?}", run.pending);
    assert_eq!(run.pending[0].seq, 4);
    assert_eq!(
        run.counts,
        Some(TestCounts {
            passed: 3,
            failed: 0,
            skipped: 1,
            ignored: 0
        })
    );
    assert_eq!(s.tests[1].dir.as_deref(), Some("/src/r"));
}

#[test]
fn tools_act_on_their_directories_and_checkouts_reset_pending_changes() {
    let s = session(
        r#"{"seq":1,"kind":"command","command":"git pull origin main","cwd":"/src/r"}
{"seq":2,"kind":"command","command":"gh pr checkout 42","cwd":"/src/r"}
{"seq":3,"kind":"command","command":"cargo test","cwd":"/src/r"}
{"seq":4,"kind":"tool","name":"mcp__git__git_merge","arguments":{"repo_path":"/src/r","branch":"main"}}
{"seq":5,"kind":"tool","name":"Write","arguments":{"file_path":"/tmp/notes.md"}}
{"seq":6,"kind":"command","command":"pushd /src/r && cargo test && popd","cwd":"/tmp"}
{"seq":7,"kind":"tool","name":"gitea_activate_profile","arguments":{}}"#,
    );
    assert!(s.tests[0].pending.is_empty(), "{:?}", s.tests[0].pending);
    assert_eq!(s.tests[0].head.as_deref(), Some("gh pr checkout 42"));
    assert_eq!(s.tests[1].dir.as_deref(), Some("/src/r"));
    let pending: Vec<u64> = s.tests[1].pending.iter().map(|p| p.seq).collect();
    assert_eq!(pending, [4]);
    let tools: Vec<(u64, Effect, Option<&str>)> = s
        .actions
        .iter()
        .filter(|a| a.route == Route::Tool)
        .map(|a| (a.seq, a.effect.clone(), a.dir.as_deref()))
        .collect();
    assert_eq!(
        tools,
        [
            (4, Effect::Merge, Some("/src/r")),
            (
                5,
                Effect::Edit(vec!["/tmp/notes.md".into()]),
                Some("/tmp/notes.md")
            ),
            (7, Effect::ProfileActivation, None)
        ]
    );
}

#[test]
fn outputs_that_ran_a_subset_say_so() {
    let table = [
        (
            "test result: ok. 212 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out",
            false,
        ),
        (
            "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 9000 filtered out",
            true,
        ),
        ("====== 5 passed, 12 deselected in 0.3s ======", true),
        ("5 passed in 0.1s", false),
    ];
    for (output, filtered) in table {
        assert_eq!(output_filter(output).is_some(), filtered, "{output}");
    }
}

#[test]
fn cargo_closing_lines_are_summed() {
    let out = "test result: ok. 10 passed; 0 failed; 2 ignored; 0 measured\ntest result: ok. 5 passed; 1 failed; 0 ignored";
    assert_eq!(
        parse_counts(out),
        Some(TestCounts {
            passed: 15,
            failed: 1,
            skipped: 0,
            ignored: 2
        })
    );
    assert_eq!(parse_counts("nothing here"), None);
    let counts = |passed, skipped| TestCounts {
        passed,
        failed: 0,
        skipped,
        ignored: 0,
    };
    let jest = "> jest\n\nTest Suites: 10 passed, 10 total\nTests:       2 skipped, 212 passed, 214 total\nSnapshots:   3 passed, 3 total\nTime:        2.1 s";
    assert_eq!(parse_counts(jest), Some(counts(212, 2)));
    let vitest = " Test Files  12 passed (12)\n      Tests  212 passed (212)\n   Duration  1.2s";
    assert_eq!(parse_counts(vitest), Some(counts(212, 0)));
}
