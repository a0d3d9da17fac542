//! The small conventions users expect: help that lists exit codes and environment
//! variables, shell completions, a man page, `--color`/`--quiet`/`-v`, and a review on
//! the default branch that says why there is nothing to review.

use std::path::Path;
use std::process::{Command, Output};

fn vouch(args: &[&str], cwd: Option<&Path>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_vouch"));
    command.args(args).env("CI", "true").env_remove("VOUCH_LOG");
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    command.output().expect("run vouch")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn help_lists_exit_codes_and_environment_variables() {
    for args in [&["--help"][..], &["review", "--help"][..]] {
        let out = vouch(args, None);
        assert_eq!(out.status.code(), Some(0));
        let text = stdout(&out);
        for needed in [
            "Exit codes:",
            "130  aborted",
            "3    usage, configuration",
            "OPENAI_BASE_URL",
            "OPENAI_API_KEY",
            "VOUCH_MODEL",
            "VOUCH_INLINE_BYTES",
            "VOUCH_CONFIG",
            "NO_COLOR",
            "--quiet",
            "--color",
        ] {
            assert!(text.contains(needed), "{args:?} lacks {needed}:\n{text}");
        }
    }
}

#[test]
fn completions_for_every_shell_know_the_review_flags() {
    for (shell, marker) in [
        ("bash", "complete -F _vouch"),
        ("zsh", "#compdef vouch"),
        ("fish", "complete -c vouch"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let out = vouch(&["completions", shell], None);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let text = stdout(&out);
        assert!(text.contains(marker), "{shell}: {marker}");
        assert!(text.contains("base-url"), "{shell} completes --base-url");
    }
    let unknown = vouch(&["completions", "tcsh"], None);
    assert_eq!(unknown.status.code(), Some(3));
}

#[test]
fn man_page_covers_every_subcommand() {
    let out = vouch(&["man"], None);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.starts_with(".ie") || text.contains(".TH vouch 1"),
        "{text}"
    );
    for sub in ["vouch-review", "vouch-validate-report", "vouch-completions"] {
        assert!(text.contains(&format!(".TH {sub} 1")), "no page for {sub}");
    }
    assert!(text.contains("base\\-url"), "flags are documented");
}

#[test]
fn a_bad_color_value_is_a_usage_error() {
    let out = vouch(&["--color", "sometimes", "man"], None);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        vouch(&["--color", "never", "-q", "man"], None)
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        vouch(&["-q", "-v", "man"], None).status.code(),
        Some(3),
        "--quiet and --verbose conflict"
    );
}

#[test]
fn on_the_default_branch_without_base_the_review_says_how_to_pick_one() {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "one"]);
    let out = vouch(&["review", "--format", "json"], Some(dir.path()));
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["opinion"]["outcome"], "nothing-to-review");
    let messages = report["messages"].to_string();
    assert!(messages.contains("With no --base"), "{messages}");
    assert!(messages.contains("default branch (main)"), "{messages}");
    assert!(messages.contains("--base HEAD~1"), "{messages}");
    // With an explicit base nothing is added.
    let explicit = vouch(
        &["review", "--format", "json", "--base", "HEAD"],
        Some(dir.path()),
    );
    let report: serde_json::Value = serde_json::from_slice(&explicit.stdout).unwrap();
    assert!(!report["messages"].to_string().contains("With no --base"));
}

#[test]
fn specialists_list_shows_built_ins_and_the_composition_pins() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/manifests/valid/dynamic-relative.toml")
        .canonicalize()
        .unwrap();
    let config = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(["specialists", "list", "--manifest"])
        .arg(&manifest)
        .env("VOUCH_CONFIG", "")
        .env("XDG_CONFIG_HOME", config.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    for built_in in [
        "generic-investigator 1.0.0  (investigator)",
        "bug-review 1.0.0  (reviewer)",
    ] {
        assert!(text.contains(built_in), "{text}");
    }
    let folder = manifest.parent().unwrap();
    let pinned = folder.join("plugins/libsecurity_review.so");
    let line = text
        .lines()
        .find(|l| l.contains("libsecurity_review.so"))
        .unwrap_or_else(|| panic!("no pinned plugin line:\n{text}"));
    assert!(
        line.contains(&format!("library {}", pinned.display())),
        "{line}"
    );
    assert!(line.contains("sha256 "), "{line}");
}
