//! The user configuration: endpoint profiles and a default composition, with the
//! precedence flags > environment > user config > --manifest > built-in default.

use serde_json::json;
use vouch_testkit::git::TestRepo;
use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
use vouch_workspace_tests::{candidates_reply, run_vouch, workspace};

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
    let server = ScriptedServer::start(
        Script::new().rule(
            Rule::when(Match::any_message_contains(
                "Instance: generic-investigator #1",
            ))
            .named("investigator")
            .reply(Reply::content(candidates_reply(
                json!([]),
                true,
                &["a.txt"],
            ))),
        ),
    )
    .await;
    let composition = workspace().join("tests/data/e2e/tools-off-small-budget.toml");
    let (_dir, config) = user_config(&format!(
        "profile = \"local\"\ncomposition = {:?}\n[profiles.local]\nbase_url = {:?}\nmodel = \"scripted\"\n",
        composition.display().to_string(),
        server.base_url()
    ));
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    let base = repo.commit("base");
    repo.write("a.txt", "b\n");
    let head = repo.commit("change");
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
