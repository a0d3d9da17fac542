//! The user configuration: endpoint profiles and a default composition, with the
//! precedence flags > environment > user config > --manifest > built-in default.

use serde_json::json;
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Script, ScriptedServer};
use vouch_workspace_tests::{
    GENERIC, ScriptedReview, one_file_change, receipt, run_vouch, stage, workspace,
};

fn user_config(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, text).unwrap();
    (dir, path.display().to_string())
}

fn line<'a>(shown: &'a str, key: &str) -> &'a str {
    shown
        .lines()
        .find(|l| l.starts_with(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no {key} line in:\n{shown}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn config_show_states_each_layer_of_the_precedence() {
    let (_dir, config) = user_config(
        "profile = \"work\"\n[profiles.work]\nbase_url = \"http://user:pw@127.0.0.1:9/v1\"\nmodel = \"profile-model\"\napi_key_env = \"WORK_KEY\"\n[profiles.other]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"other-model\"\n",
    );
    let manifest = workspace().join("tests/data/e2e/model-in-manifest.toml");
    let manifest = manifest.display().to_string();
    let show = |args: Vec<&'static str>, envs: Vec<(&'static str, &'static str)>| {
        let config = config.clone();
        let manifest = manifest.clone();
        async move {
            let mut full = vec!["config", "show", "--manifest", manifest.as_str()];
            full.extend(args);
            let mut all = vec![("VOUCH_CONFIG", config.as_str())];
            all.extend(envs);
            let out = run_vouch(&full, &all).await;
            assert_eq!(out.code, 0, "{}", out.stdout);
            out.stdout
        }
    };
    // The user profile beats the manifest's [model].
    let shown = show(vec![], vec![("WORK_KEY", "sk-SECRET-work")]).await;
    assert_eq!(
        line(&shown, "model"),
        "model = \"profile-model\"  # user config"
    );
    assert!(line(&shown, "profile").contains("\"work\"  # from user config"));
    assert!(line(&shown, "api_key_env").contains("set, [redacted]"));
    assert!(!shown.contains("SECRET"), "keys are redacted:\n{shown}");
    assert!(
        !shown.contains("user:pw"),
        "URL credentials are not shown:\n{shown}"
    );
    // The environment beats the profile; a flag beats the environment.
    let shown = show(vec![], vec![("VOUCH_MODEL", "env-model")]).await;
    assert_eq!(
        line(&shown, "model"),
        "model = \"env-model\"  # VOUCH_MODEL"
    );
    let shown = show(
        vec!["--model", "flag-model"],
        vec![("VOUCH_MODEL", "env-model")],
    )
    .await;
    assert_eq!(line(&shown, "model"), "model = \"flag-model\"  # --model");
    // --profile picks another profile; without a profile the manifest's value stands.
    let shown = show(vec!["--profile", "other"], vec![]).await;
    assert_eq!(
        line(&shown, "model"),
        "model = \"other-model\"  # user config"
    );
    let (_empty, none) = user_config("");
    let out = run_vouch(
        &["config", "show", "--manifest", &manifest],
        &[
            ("VOUCH_CONFIG", &none),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
        ],
    )
    .await;
    assert!(
        out.stdout
            .contains("model = \"manifest-model\"  # manifest"),
        "{}",
        out.stdout
    );
    // An unknown profile is a configuration error naming the ones that exist.
    let out = run_vouch(
        &["config", "show", "--profile", "nope"],
        &[("VOUCH_CONFIG", &config)],
    )
    .await;
    assert_eq!(out.code, 3);
    assert!(out.stdout.contains("other, work"), "{}", out.stdout);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_review_uses_the_profile_endpoint_and_the_default_composition() {
    let server = ScriptedServer::start(Script::new().rule(stage(
        GENERIC,
        "investigator",
        [receipt(json!([]), &["a.txt"])],
    )))
    .await;
    let composition = workspace().join("tests/data/e2e/tools-off-small-budget.toml");
    let (_dir, config) = user_config(&format!(
        "profile = \"local\"\ncomposition = {:?}\n[profiles.local]\nbase_url = {:?}\nmodel = \"scripted\"\n",
        composition.display().to_string(),
        server.base_url()
    ));
    let (repo, base, head) = one_file_change();
    let path = repo.path().display().to_string();
    let out = run_vouch(
        &[
            "review", "--repo", &path, "--base", &base, "--head", &head, "--format", "json",
        ],
        &[("VOUCH_CONFIG", &config)],
    )
    .await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.json()["composition"], "e2e-tools-off");
    assert_eq!(server.served_by("investigator").len(), 1);
}

async fn shown(config: &str, args: &[&str], envs: &[(&str, &str)]) -> String {
    let mut full = vec!["config", "show"];
    full.extend_from_slice(args);
    let mut all = vec![("VOUCH_CONFIG", config)];
    all.extend_from_slice(envs);
    let out = run_vouch(&full, &all).await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    out.stdout
}

/// Every key, layer by layer: flags > environment > user config > `--manifest` > built-in
/// default (the repository file is applied by a review: see the next test).
#[tokio::test(flavor = "multi_thread")]
async fn precedence_per_key() {
    let manifest = workspace()
        .join("tests/data/e2e/model-in-manifest.toml")
        .display()
        .to_string();
    let other = workspace()
        .join("tests/data/e2e/tools-off-small-budget.toml")
        .display()
        .to_string();
    let user = format!(
        "profile = \"p\"\ncomposition = {other:?}\n[profiles.p]\nbase_url = \"http://127.0.0.1:9/user\"\nmodel = \"user-model\"\napi_key_env = \"USER_KEY\"\n[budget]\nmax_output_tokens = 1000\nmax_turns = 5\n"
    );
    let (_dir, with_user) = user_config(&user);
    let (_empty, no_user) = user_config("");
    let m = manifest.as_str();
    let no_budget = workspace()
        .join("tests/data/e2e/no-budget.toml")
        .display()
        .to_string();
    // (user config, flags, environment, expected line)
    type Case<'a> = (&'a str, Vec<&'a str>, Vec<(&'a str, &'a str)>, &'a str);
    let cases: Vec<Case> = vec![
        // base_url
        (
            &no_user,
            vec!["--manifest", m],
            vec![("OPENAI_BASE_URL", "http://127.0.0.1:9/env")],
            "base_url = \"http://127.0.0.1:9/env\"  # OPENAI_BASE_URL",
        ),
        (
            &with_user,
            vec!["--manifest", m],
            vec![],
            "base_url = \"http://127.0.0.1:9/user\"  # user config",
        ),
        (
            &with_user,
            vec!["--manifest", m],
            vec![("OPENAI_BASE_URL", "http://127.0.0.1:9/env")],
            "base_url = \"http://127.0.0.1:9/env\"  # OPENAI_BASE_URL",
        ),
        (
            &with_user,
            vec!["--manifest", m, "--base-url", "http://127.0.0.1:9/flag"],
            vec![("OPENAI_BASE_URL", "http://127.0.0.1:9/env")],
            "base_url = \"http://127.0.0.1:9/flag\"  # --base-url",
        ),
        // model
        (
            &no_user,
            vec!["--manifest", m, "--base-url", "http://h/v1"],
            vec![],
            "model = \"manifest-model\"  # manifest",
        ),
        (
            &with_user,
            vec!["--manifest", m],
            vec![],
            "model = \"user-model\"  # user config",
        ),
        (
            &with_user,
            vec!["--manifest", m],
            vec![("VOUCH_MODEL", "env-model")],
            "model = \"env-model\"  # VOUCH_MODEL",
        ),
        (
            &with_user,
            vec!["--manifest", m, "--model", "flag-model"],
            vec![("VOUCH_MODEL", "env-model")],
            "model = \"flag-model\"  # --model",
        ),
        // api_key_env (no environment layer: it names a variable)
        (
            &no_user,
            vec!["--manifest", m, "--base-url", "http://h/v1"],
            vec![],
            "api_key_env = \"OPENAI_API_KEY\"",
        ),
        (
            &with_user,
            vec!["--manifest", m],
            vec![],
            "api_key_env = \"USER_KEY\"",
        ),
        (
            &with_user,
            vec!["--manifest", m, "--api-key-env", "FLAG_KEY"],
            vec![],
            "api_key_env = \"FLAG_KEY\"",
        ),
        // profile
        (
            &with_user,
            vec![],
            vec![],
            "profile = \"p\"  # from user config",
        ),
        // composition
        (
            &no_user,
            vec![],
            vec![],
            "composition = \"default\"  # builtin:manifests/default.toml (default)",
        ),
        (
            &with_user,
            vec![],
            vec![],
            "composition = \"e2e-tools-off\"",
        ),
        (
            &with_user,
            vec!["--manifest", m],
            vec![],
            "composition = \"e2e-model-in-manifest\"",
        ),
        // budget keys: default < manifest; the user's ceiling lowers, never raises
        (
            &no_user,
            vec![],
            vec![],
            "max_tool_calls = 24  # built-in composition",
        ),
        (
            &no_user,
            vec!["--manifest", &no_budget],
            vec![],
            "max_tool_calls = 24  # default",
        ),
        (
            &no_user,
            vec!["--manifest", m],
            vec![],
            "max_output_tokens = 2500  # manifest",
        ),
        (
            &with_user,
            vec!["--manifest", m],
            vec![],
            "max_output_tokens = 1000  # capped by the user config's [budget] (the composition asks 2500 from its manifest)",
        ),
        (
            &with_user,
            vec!["--manifest", m],
            vec![],
            "max_turns = 1  # manifest",
        ),
        (&with_user, vec![], vec![], "max_turns = 1  # manifest"),
    ];
    for (config, args, envs, expected) in cases {
        let out = shown(config, &args, &envs).await;
        let key = expected.split(" = ").next().unwrap();
        assert!(
            line(&out, key).starts_with(expected),
            "{args:?} {envs:?}: expected {expected:?}, got:\n{out}"
        );
    }
    // A ceiling lowers the budget of every stage, and says which.
    let (_d, ceiling) = user_config("[budget]\nmax_turns = 3\n");
    let out = shown(&ceiling, &[], &[]).await;
    assert!(
        out.contains(
            "# generic-investigator: max_turns capped from 12 to 3 by the user config's [budget]"
        ),
        "{out}"
    );
    assert!(
        out.contains("# verifier: max_turns capped from 12 to 3"),
        "{out}"
    );
}

/// A review runs under the user's ceiling, and the repository file may lower it further:
/// the model's `max_tokens` is the smallest of the three.
#[tokio::test(flavor = "multi_thread")]
async fn a_review_runs_under_the_ceiling_and_the_repository_file_lowers_it_further() {
    let composition = workspace().join("tests/data/e2e/no-budget.toml");
    let (_dir, config) = user_config("[budget]\nmax_output_tokens = 5000\n");
    let (_none, no_ceiling) = user_config("");
    // (user config, repository file, the stage's max_output_tokens)
    let cases = [
        (&no_ceiling, None, 8192),
        (&config, None, 5000),
        (&config, Some("[budget]\nmax_output_tokens = 3000\n"), 3000),
    ];
    for (config, repo_file, expected) in cases {
        let server = ScriptedServer::start(Script::new().rule(stage(
            GENERIC,
            "investigator",
            [receipt(json!([]), &["a.txt"])],
        )))
        .await;
        let repo = TestRepo::new();
        repo.write("a.txt", "a\n");
        if let Some(text) = repo_file {
            repo.write(".vouch/review.toml", text);
        }
        let base = repo.commit("base");
        repo.write("a.txt", "b\n");
        let head = repo.commit("change");
        let manifest = composition.display().to_string();
        let out = ScriptedReview::new(&repo, &base, &head, &server)
            .args(&["--manifest", &manifest, "--tools", "off"])
            .envs(&[("VOUCH_CONFIG", config)])
            .run()
            .await;
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        let served = server.served_by("investigator");
        // The contract is sized to the stage's output budget: max_tokens is that budget.
        assert_eq!(
            served[0].body["max_tokens"],
            json!(expected),
            "{repo_file:?}"
        );
    }
}

/// A broken `.vouch/review.toml` in the base tree stops the review with an error that
/// says the file was read from the base revision (a fix in the change cannot apply to
/// its own review) and how to go on; `--no-repo-config` reviews without it.
#[tokio::test(flavor = "multi_thread")]
async fn a_broken_repository_file_at_base_says_where_it_was_read_and_how_to_go_on() {
    let composition = workspace().join("tests/data/e2e/no-budget.toml");
    let manifest = composition.display().to_string();
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.write(".vouch/review.toml", "[files]\nexclude = 3\n");
    let base = repo.commit("base");
    repo.write("a.txt", "b\n");
    repo.write(".vouch/review.toml", "[files]\nexclude = []\n");
    let head = repo.commit("fix the repository file");
    let files = [".vouch/review.toml", "a.txt"];
    let server = ScriptedServer::start(Script::new().rule(stage(
        GENERIC,
        "investigator",
        [receipt(json!([]), &files)],
    )))
    .await;
    let args = ["--manifest", manifest.as_str(), "--tools", "off"];
    let out = ScriptedReview::new(&repo, &base, &head, &server)
        .args(&args)
        .run()
        .await;
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(
        said.contains("`files.exclude`")
            && said.contains("from the base revision")
            && said.contains("--no-repo-config"),
        "{said}"
    );
    assert!(
        server.served_by("investigator").is_empty(),
        "no model request"
    );
    let out = ScriptedReview::new(&repo, &base, &head, &server)
        .args(&[&args[..], &["--no-repo-config"]].concat())
        .run()
        .await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
}

/// A plugin pinned in the user configuration serves a composition that names its id
/// only, wins over the manifest's own pin, and `vouch specialists list` shows it.
#[tokio::test(flavor = "multi_thread")]
async fn a_user_pinned_plugin_serves_a_composition() {
    let profile = vouch_testkit::cargo::build_packages(
        &workspace().join("Cargo.toml"),
        &["vouch-test-plugin-echo"],
    );
    let library = profile.join(format!(
        "{}vouch_test_plugin_echo{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let sha256 = vouch_host::registry::sha256_file(&library).unwrap();
    let (dir, config) = user_config(&format!(
        "[plugins.test-echo]\nlibrary = {:?}\nsha256 = {sha256:?}\n",
        library.display().to_string()
    ));
    // The manifest's own pin names a library that does not exist: the user's wins.
    let manifest = dir.path().join("echo.toml");
    std::fs::write(
        &manifest,
        format!(
            "[composition]\nname = \"echo\"\nconcurrency = 1\ntools = \"off\"\n[budget]\nmax_turns = 1\nmax_output_tokens = 2500\n\
             [[specialist]]\nid = \"test-echo\"\nversion = \"1.2.3\"\nrole = \"investigator\"\nlibrary = \"missing.so\"\nsha256 = \"{}\"\n\
             [verifier]\nid = \"verifier\"\nversion = \"1.0.0\"\n",
            "0".repeat(64)
        ),
    )
    .unwrap();
    let manifest = manifest.display().to_string();
    let listed = run_vouch(
        &["specialists", "list", "--manifest", &manifest],
        &[("VOUCH_CONFIG", &config)],
    )
    .await;
    assert_eq!(listed.code, 0, "{}", listed.stdout);
    assert!(
        listed.stdout.contains("Pinned in the user configuration:"),
        "{}",
        listed.stdout
    );
    assert!(
        listed.stdout.contains(&format!(
            "test-echo 1.2.3  (investigator, ×1, pinned by the user configuration) library {} sha256 {sha256}",
            library.display()
        )),
        "{}",
        listed.stdout
    );
    let server = ScriptedServer::start(Script::new().rule(stage(
        "echo system for test-echo #1",
        "echo",
        [receipt(json!([]), &["a.txt"])],
    )))
    .await;
    let (repo, base, head) = one_file_change();
    let out = ScriptedReview::new(&repo, &base, &head, &server)
        .args(&["--manifest", &manifest])
        .envs(&[("VOUCH_CONFIG", &config)])
        .run()
        .await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(server.served_by("echo").len(), 1);
    // A pin may not take a built-in's id.
    let (_d, builtin) = user_config(&format!(
        "[plugins.conventions]\nlibrary = {:?}\nsha256 = {sha256:?}\n",
        library.display().to_string()
    ));
    let out = run_vouch(&["config", "show"], &[("VOUCH_CONFIG", &builtin)]).await;
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(out.stdout.contains("plugins.conventions"), "{}", out.stdout);
    assert!(out.stdout.contains("its own id"), "{}", out.stdout);
}
