//! Composition manifests, the repository's `.vouch/review.toml`, and endpoint precedence.
//!
//! Invalid fixtures live under `tests/data/manifests/` at the workspace root. Each one
//! states its expected error in its first lines, next to the input:
//!
//! ```toml
//! # expect-kind: unknown-key          (ErrorKind::as_str)
//! # expect-at: 7:1                    (line:column, or `none`)
//! # expect-key: composition.bogus     (dotted key path, or `none`)
//! ```

// Table-driven cases are tuples spelled out at their definition, which reads better
// here than a named type per table.
#![allow(clippy::type_complexity)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use vouch_abi::Role;
use vouch_host::manifest::{
    ApiKey, Budget, Composition, ENV_API_KEY, ENV_BASE_URL, ENV_MODEL, EndpointError,
    EndpointFlags, ErrorKind, ExclusionSource, FileSelection, ManifestError, ModelSection,
    PluginSource, REPO_OVERRIDE_PATH, RepoOverrides, SettingSource, ToolsMode, excluded,
    partition_excluded, resolve_endpoint, selected_files, unassigned_files,
};

fn data(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/manifests")
        .join(relative)
}

fn fixtures(folder: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data(folder))
        .unwrap_or_else(|e| panic!("read {folder}: {e}"))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    files.sort();
    files
}

struct Expected {
    kind: String,
    at: Option<(usize, usize)>,
    key: Option<String>,
}

fn expected(path: &Path, text: &str) -> Expected {
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(&format!("# expect-{name}: ")))
            .unwrap_or_else(|| panic!("{}: no `# expect-{name}:` line", path.display()))
            .trim()
            .to_owned()
    };
    let at = field("at");
    let at = (at != "none").then(|| {
        let (line, column) = at.split_once(':').expect("expect-at is line:column");
        (line.parse().unwrap(), column.parse().unwrap())
    });
    let key = field("key");
    Expected {
        kind: field("kind"),
        at,
        key: (key != "none").then_some(key),
    }
}

/// Compares one error with its fixture's expectation; returns a description of every
/// difference (empty when it matches).
fn mismatches(name: &str, error: &ManifestError, want: &Expected, origin: &str) -> Vec<String> {
    let mut out = Vec::new();
    if error.kind().as_str() != want.kind {
        out.push(format!(
            "{name}: kind {} != expected {}",
            error.kind().as_str(),
            want.kind
        ));
    }
    let location = error
        .location()
        .expect("invalid manifests carry a location");
    let at = location.position.map(|p| (p.line, p.column));
    if at != want.at {
        out.push(format!("{name}: at {at:?} != expected {:?}", want.at));
    }
    if location.key != want.key {
        out.push(format!(
            "{name}: key {:?} != expected {:?}",
            location.key, want.key
        ));
    }
    let shown = error.to_string();
    let mut must_show = vec![origin.to_owned(), "\n  help: ".to_owned()];
    if let Some((line, column)) = want.at {
        must_show.push(format!(":{line}:{column}"));
    }
    if let Some(key) = &want.key {
        must_show.push(format!("key `{key}`"));
    }
    for part in must_show {
        if !shown.contains(&part) {
            out.push(format!("{name}: message lacks {part:?}:\n{shown}"));
        }
    }
    out
}

#[test]
fn every_invalid_manifest_fails_at_its_key_with_a_fix() {
    let mut failures = Vec::new();
    let mut kinds = BTreeSet::new();
    let files = fixtures("invalid");
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).unwrap();
        let want = expected(path, &text);
        match Composition::load(path) {
            Ok(_) => failures.push(format!("{name}: parsed, expected {}", want.kind)),
            Err(error) => {
                kinds.insert(error.kind().as_str());
                failures.extend(mismatches(
                    &name,
                    &error,
                    &want,
                    &path.display().to_string(),
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The table must keep covering every error class the brief names.
    for kind in [
        ErrorKind::Syntax,
        ErrorKind::UnknownKey,
        ErrorKind::BadValue,
        ErrorKind::MissingKey,
        ErrorKind::BadSha256,
        ErrorKind::LibraryWithoutSha256,
        ErrorKind::Sha256WithoutLibrary,
        ErrorKind::DuplicateLabel,
        ErrorKind::ZeroInstances,
        ErrorKind::ZeroConcurrency,
        ErrorKind::MissingVerifier,
        ErrorKind::BadGlob,
        ErrorKind::UnknownLanguage,
        ErrorKind::SelectionNotAllowed,
        ErrorKind::BadBudget,
        ErrorKind::NoEnabledSpecialist,
    ] {
        assert!(kinds.contains(kind.as_str()), "no fixture for {kind:?}");
    }
}

#[test]
fn every_invalid_repository_file_fails_at_its_key_and_says_it_may_not() {
    let mut failures = Vec::new();
    let mut kinds = BTreeSet::new();
    for path in fixtures("repo/invalid") {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let want = expected(&path, &text);
        match RepoOverrides::from_toml_str(&text) {
            Ok(_) => failures.push(format!("{name}: parsed, expected {}", want.kind)),
            Err(error) => {
                kinds.insert(error.kind().as_str());
                failures.extend(mismatches(&name, &error, &want, REPO_OVERRIDE_PATH));
                let refused = matches!(
                    error.kind(),
                    ErrorKind::ForbiddenInRepository | ErrorKind::UnknownKey
                );
                if refused && !error.to_string().contains("may not set") {
                    failures.push(format!("{name}: does not say `may not set`: {error}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for kind in [ErrorKind::ForbiddenInRepository, ErrorKind::UnknownKey] {
        assert!(kinds.contains(kind.as_str()), "no fixture for {kind:?}");
    }
}

fn labels(composition: &Composition) -> Vec<String> {
    composition
        .instances()
        .into_iter()
        .map(|plan| plan.label)
        .collect()
}

#[test]
fn default_composition_runs_four_lanes_and_the_verifier() {
    let builtin = Composition::builtin_default();
    let on_disk = Composition::load(&data("../../../manifests/default.toml")).unwrap();
    for composition in [&builtin, &on_disk] {
        assert_eq!(
            labels(composition),
            [
                "generic-investigator #1",
                "outcome-investigator #1",
                "conventions #1",
                "clean-result-audit #1"
            ]
        );
        let plans = composition.instances();
        let roles: Vec<Role> = plans.iter().map(|p| p.role).collect();
        assert_eq!(
            roles,
            [
                Role::Investigator,
                Role::OutcomeInvestigator,
                Role::Conventions,
                Role::CleanResultAudit
            ]
        );
        for plan in &plans {
            assert_eq!(plan.id, plan.specialist_label);
            assert_eq!(plan.version, "1.0.0");
            assert_eq!(plan.source, PluginSource::BuiltIn);
            assert!(matches!(plan.selection, FileSelection::All));
            assert_eq!(plan.budget, Budget::default());
        }
        let verifier = composition.verifier_plan();
        assert_eq!(
            (verifier.id.as_str(), verifier.version.as_str()),
            ("verifier", "1.0.0")
        );
        assert_eq!(verifier.role, Role::Verifier);
        assert_eq!(composition.name, "default");
        assert_eq!(composition.tools, ToolsMode::Auto);
        assert_eq!(composition.concurrency, 4);
    }
}

#[test]
fn panel_composition_runs_five_reviewers_with_stable_labels() {
    let builtin = Composition::builtin_panel();
    let on_disk = Composition::load(&data("../../../manifests/panel.toml")).unwrap();
    for composition in [&builtin, &on_disk] {
        assert_eq!(
            labels(composition),
            [
                "instructions-review #1",
                "instructions-review #2",
                "bug-review #1",
                "bug-review #2",
                "objective-review #1"
            ]
        );
        let plans = composition.instances();
        assert!(plans.iter().all(|p| p.role == Role::Reviewer));
        let ids: Vec<(&str, u32)> = plans.iter().map(|p| (p.id.as_str(), p.instance)).collect();
        assert_eq!(
            ids,
            [
                ("instructions-review", 1),
                ("instructions-review", 2),
                ("bug-review", 1),
                ("bug-review", 2),
                ("objective-review", 1)
            ]
        );
        assert_eq!(composition.verifier_plan().id, "verifier");
    }
}

#[test]
fn minimal_manifest_takes_documented_defaults() {
    let c = Composition::load(&data("valid/minimal.toml")).unwrap();
    assert_eq!(c.name, "minimal", "name defaults to the file stem");
    assert_eq!(c.description, None);
    assert_eq!(c.concurrency, 4);
    assert_eq!(c.tools, ToolsMode::Auto);
    assert_eq!(c.model, ModelSection::default());
    assert_eq!(
        c.budget,
        Budget {
            max_turns: 12,
            max_tool_calls: 24,
            max_output_tokens: 8192,
            max_total_tokens: 60_000,
            max_shard_tokens: 4_000,
            max_shards: 2048,
            max_request_tokens: 24_000,
            prefetch_tokens: 6_000,
        }
    );
    assert!(c.exclusions.rules().is_empty());
    assert_eq!(labels(&c), ["generic-investigator #1"]);
    assert_eq!(c.instructions, None);
}

/// `[model] context_tokens` sizes every budget key no table sets (the rule of
/// `Budget::sized`), for `[budget]`, each specialist entry and the verifier; a key a
/// table sets keeps its value, and the window given by the caller (the profile's, or the
/// endpoint's when the manifest has none) wins over the manifest's.
#[test]
fn the_manifest_window_sizes_the_budgets_no_table_sets() {
    let text = r#"
[model]
context_tokens = 131072

[budget]
max_output_tokens = 8192

[[specialist]]
id = "generic-investigator"
version = "1.0.0"
role = "investigator"

[[specialist]]
id = "conventions"
version = "1.0.0"
role = "conventions"
[specialist.budget]
max_request_tokens = 40000

[verifier]
id = "verifier"
version = "1.0.0"
[verifier.budget]
max_shard_tokens = 8000
"#;
    let origin = Path::new("window.toml");
    let c = Composition::from_toml_str(text, origin).unwrap();
    let window = vouch_core::ContextWindow {
        tokens: 131_072,
        source: vouch_core::WindowSource::Manifest,
    };
    assert_eq!(c.window, window);
    let sizes = |b: &Budget| (b.max_request_tokens, b.max_shard_tokens, b.max_total_tokens);
    assert_eq!(sizes(&c.budget), (122_000, 53_000, 305_000));
    assert_eq!(sizes(&c.specialists[0].budget), (122_000, 53_000, 305_000));
    assert_eq!(sizes(&c.specialists[1].budget), (40_000, 12_000, 100_000));
    assert_eq!(sizes(&c.verifier.budget), (122_000, 8_000, 305_000));

    let profile = vouch_core::ContextWindow {
        tokens: 65_536,
        source: vouch_core::WindowSource::UserConfig,
    };
    let c = Composition::from_toml_str_for(text, origin, profile).unwrap();
    assert_eq!(c.window, profile);
    assert_eq!(sizes(&c.budget), (57_000, 20_000, 142_000));
    // At 32k the conventions entry's 40,000-token requests and their 8,192-token
    // replies do not fit the window: refused, naming its table.
    let small = vouch_core::ContextWindow {
        tokens: 32_768,
        ..profile
    };
    let err = Composition::from_toml_str_for(text, origin, small).unwrap_err();
    let err = err.to_string();
    assert!(err.contains("specialist[1].budget"), "{err}");
    assert!(err.contains("max_request_tokens (40000)"), "{err}");

    // Without a window, the budgets are vouch's fixed defaults, as before.
    let c =
        Composition::from_toml_str(&text.replace("context_tokens = 131072", ""), origin).unwrap();
    assert_eq!(c.window, vouch_core::ContextWindow::default());
    assert_eq!(sizes(&c.budget), (24_000, 4_000, 60_000));
}

/// The built-in compositions are valid at every window vouch accepts (so
/// `Composition::builtin_default_for` never fails), and at each every stage's request
/// bound plus the reply it asks for fits the window: the compositions set no
/// `max_output_tokens`, so it follows the window too.
#[test]
fn the_builtin_compositions_fit_every_window() {
    let windows = [
        8_192, 12_000, 16_384, 24_576, 32_768, 65_536, 131_072, 1_048_576,
    ];
    for name in ["default", "panel", "local-model"] {
        let path = data(&format!("../../../manifests/{name}.toml"));
        let text = std::fs::read_to_string(&path).unwrap();
        for tokens in windows {
            let window = vouch_core::ContextWindow {
                tokens,
                source: vouch_core::WindowSource::Endpoint,
            };
            let c = Composition::from_toml_str_for(&text, &path, window)
                .unwrap_or_else(|e| panic!("{name} at {tokens}: {e}"));
            let budgets = c.specialists.iter().map(|s| &s.budget);
            for b in budgets.chain([&c.budget, &c.verifier.budget]) {
                assert!(
                    b.max_request_tokens + b.max_output_tokens <= tokens,
                    "{name} at {tokens}: {b:?}"
                );
            }
        }
    }
    let c = Composition::builtin_default_for(Some(vouch_core::ContextWindow {
        tokens: 16_384,
        source: vouch_core::WindowSource::Endpoint,
    }));
    assert_eq!(
        (c.budget.max_output_tokens, c.budget.max_request_tokens),
        (4_096, 12_000)
    );
}

#[test]
fn every_key_manifest_is_read_into_the_composition() {
    let c = Composition::load(&data("valid/every-key.toml")).unwrap();
    assert_eq!(c.name, "every-key");
    assert_eq!(c.concurrency, 2);
    assert_eq!(c.tools, ToolsMode::On);
    assert_eq!(
        c.model,
        ModelSection {
            base_url: Some("http://127.0.0.1:8080/v1".into()),
            model: Some("gpt-4o-mini".into()),
            api_key_env: Some("MY_PROVIDER_KEY".into()),
            request_timeout_secs: Some(300),
            max_retries: Some(5),
            structured_outputs: Some(false),
            auth: Some(vouch_llm::AuthScheme::ApiKeyHeader),
            api_version: Some("2024-10-21".into()),
            context_tokens: None,
            headers: [("X-Title".to_owned(), "vouch".to_owned())].into(),
        }
    );
    let defaults = Budget {
        max_turns: 10,
        max_tool_calls: 20,
        max_output_tokens: 2048,
        max_total_tokens: 40_000,
        max_shard_tokens: 6_000,
        max_shards: 64,
        max_request_tokens: 20_000,
        prefetch_tokens: 3_000,
    };
    assert_eq!(c.budget, defaults);
    // Disabled entries expand to nothing; a custom label names the instances.
    assert_eq!(
        labels(&c),
        ["generalist #1", "rust-review #1", "rust-review #2"]
    );
    let plans = c.instances();
    assert_eq!(plans[0].budget, defaults);
    assert_eq!(
        plans[1].budget,
        Budget {
            max_turns: 6,
            max_total_tokens: 20_000,
            max_shards: 8,
            prefetch_tokens: 0,
            ..defaults
        },
        "a specialist override replaces only the keys it sets"
    );
    assert_eq!(plans[1].model.as_deref(), Some("big-model"));
    let verifier = c.verifier_plan();
    assert_eq!(verifier.model.as_deref(), Some("careful-model"));
    assert_eq!(verifier.budget.max_output_tokens, 4000);
    assert_eq!(verifier.budget.max_turns, 10);

    let files: Vec<String> = [
        "build.rs",
        "src/lib.rs",
        "src/tests/a.rs",
        "Cargo.toml",
        "README.md",
        "src/MAIN.RS",
    ]
    .map(String::from)
    .to_vec();
    assert_eq!(
        selected_files(&plans[1], &files),
        ["build.rs", "src/lib.rs", "Cargo.toml", "src/MAIN.RS"],
        "include globs or language extensions (case-insensitive), minus select.exclude"
    );
    assert_eq!(
        selected_files(&plans[0], &files),
        files,
        "no select: every file"
    );
}

#[test]
fn relative_library_resolves_against_the_manifest_folder() {
    let path = data("valid/dynamic-relative.toml");
    let c = Composition::load(&path).unwrap();
    let folder = std::path::absolute(path.parent().unwrap()).unwrap();
    let plan = &c.instances()[0];
    assert_eq!(
        plan.source,
        PluginSource::Dynamic {
            library: folder.join("plugins/libsecurity_review.so"),
            sha256: "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789".into(),
        }
    );
    assert_eq!(plan.label, "security-review #1");
    assert_eq!(plan.version, "2.1.0");
    assert_eq!(
        c.verifier.source,
        PluginSource::Dynamic {
            library: PathBuf::from("/opt/vouch/libverifier.so"),
            sha256: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef".into(),
        }
    );
    assert_eq!(c.tools, ToolsMode::Off);
    assert_eq!(c.concurrency, 1);
}

#[test]
fn unreadable_manifest_names_the_path() {
    let path = data("valid/does-not-exist.toml");
    let error = Composition::load(&path).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unreadable);
    assert!(error.to_string().contains("does-not-exist.toml"), "{error}");
    assert!(error.to_string().contains("--manifest"), "{error}");
}

#[test]
fn api_key_pasted_as_a_variable_name_is_not_echoed() {
    let error = Composition::load(&data("invalid/api-key-instead-of-name.toml")).unwrap_err();
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains("sk-live"), "{shown}");
    assert!(shown.contains("never the key itself"), "{shown}");
}

fn files(paths: &[&str]) -> Vec<String> {
    paths.iter().map(|p| p.to_string()).collect()
}

#[test]
fn exclusions_give_the_matching_rule_as_reason() {
    let c = Composition::builtin_default();
    let cases: &[(&str, Option<&str>)] = &[
        ("Cargo.lock", Some("**/Cargo.lock")),
        ("crates/x/Cargo.lock", Some("**/Cargo.lock")),
        ("web/vendor/app.min.js", Some("**/*.min.js")),
        ("src/lib.rs", None),
        ("Cargo.lock.md", None),
        ("web/app.js", None),
    ];
    for (path, pattern) in cases {
        let got = excluded(&c, path);
        assert_eq!(got.as_ref().map(|e| e.pattern.as_str()), *pattern, "{path}");
        if let Some(exclusion) = got {
            assert_eq!(
                exclusion.source,
                ExclusionSource::Composition(PathBuf::from("builtin:manifests/default.toml"))
            );
            assert_eq!(
                exclusion.to_string(),
                format!(
                    "matches exclusion `{}` in [files].exclude of builtin:manifests/default.toml",
                    exclusion.pattern
                )
            );
        }
    }
    let (reviewable, excluded_files) =
        partition_excluded(&c, &files(&["Cargo.lock", "README.md", "src/a.rs"]));
    assert_eq!(reviewable, ["README.md", "src/a.rs"]);
    assert_eq!(excluded_files.len(), 1);
    assert_eq!(excluded_files[0].0, "Cargo.lock");
}

#[test]
fn files_no_instance_selects_are_reported_as_unassigned() {
    let text = r#"
[[specialist]]
id = "rust-review"
version = "1.0.0"
role = "reviewer"
select = { languages = ["rust"] }

[verifier]
id = "verifier"
version = "1.0.0"
"#;
    let c = Composition::from_toml_str(text, Path::new("narrow.toml")).unwrap();
    let reviewable = files(&["README.md", "src/lib.rs", "docs/x.md"]);
    assert_eq!(
        unassigned_files(&c, &reviewable),
        ["README.md", "docs/x.md"]
    );
    assert!(unassigned_files(&Composition::builtin_default(), &reviewable).is_empty());
}

fn repo(text: &str) -> RepoOverrides {
    RepoOverrides::from_toml_str(text).unwrap_or_else(|e| panic!("{e}"))
}

/// What a repository file changes is stated in words, in the file's order, so a review
/// names every specialist the repository switched off or narrowed.
#[test]
fn a_repository_file_states_what_it_changes() {
    let text = std::fs::read_to_string(data("repo/valid/everything-allowed.toml")).unwrap();
    assert_eq!(
        repo(&text).changes(),
        [
            "disabled `conventions`",
            "capped the budget of `clean-result-audit`",
            "replaced the file selection of `outcome-investigator`",
            "excluded generated/**, **/*.pb.go",
            "capped every stage's budget",
            "added reviewer instructions",
        ]
    );
    assert!(repo("").changes().is_empty());
}

#[test]
fn repository_file_switches_selects_excludes_and_instructs() {
    let text = std::fs::read_to_string(data("repo/valid/everything-allowed.toml")).unwrap();
    let overrides = repo(&text);
    let mut c = Composition::builtin_default();
    c.apply_repo_overrides(&overrides).unwrap();

    assert_eq!(
        labels(&c),
        [
            "generic-investigator #1",
            "outcome-investigator #1",
            "clean-result-audit #1"
        ],
        "conventions disabled"
    );
    assert_eq!(
        c.instructions.as_deref(),
        Some("Public functions need a doc comment. Never log request bodies.")
    );
    let plans = c.instances();
    let changed = files(&["src/app.py", "src/x.rs", "tools/y.py", "README.md"]);
    assert_eq!(
        selected_files(&plans[1], &changed),
        ["src/app.py", "src/x.rs", "tools/y.py"]
    );
    assert_eq!(selected_files(&plans[0], &changed), changed);

    let generated = excluded(&c, "generated/schema.rs").expect("repository exclusion applies");
    assert_eq!(generated.source, ExclusionSource::Repository);
    assert_eq!(
        generated.to_string(),
        "matches exclusion `generated/**` in [files].exclude of the repository's .vouch/review.toml"
    );
    assert!(
        excluded(&c, "Cargo.lock").is_some(),
        "the user's exclusions stay"
    );

    // Budgets: the repository lowers, never raises.
    let user = Budget::default();
    assert_eq!(c.budget.max_turns, user.max_turns, "100 does not raise 12");
    assert_eq!(c.budget.max_tool_calls, 10);
    assert_eq!(plans[0].budget.max_tool_calls, 10);
    assert_eq!(c.verifier.budget.max_tool_calls, 10);
    assert_eq!(plans[2].budget.max_total_tokens, 30_000);
    assert_eq!(plans[0].budget.max_total_tokens, user.max_total_tokens);
}

#[test]
fn repository_budget_caps_a_specialist_below_the_users_value_only() {
    let text = r#"
[[specialist]]
id = "bug-review"
version = "1.0.0"
role = "reviewer"
budget = { max_turns = 5 }

[verifier]
id = "verifier"
version = "1.0.0"
"#;
    let user = Composition::from_toml_str(text, Path::new("user.toml")).unwrap();
    let cases: &[(&str, u32)] = &[
        ("[specialist.bug-review.budget]\nmax_turns = 50\n", 5),
        ("[specialist.bug-review.budget]\nmax_turns = 3\n", 3),
        ("[budget]\nmax_turns = 2\n", 2),
        ("[budget]\nmax_turns = 9\n", 5),
    ];
    for (file, turns) in cases {
        let mut c = user.clone();
        c.apply_repo_overrides(&repo(file)).unwrap();
        assert_eq!(c.instances()[0].budget.max_turns, *turns, "{file}");
    }
}

#[test]
fn repository_file_can_enable_a_builtin_the_user_listed_disabled() {
    let text = r#"
[[specialist]]
id = "generic-investigator"
version = "1.0.0"
role = "investigator"

[[specialist]]
id = "bug-review"
version = "1.0.0"
role = "reviewer"
instances = 2
enabled = false

[verifier]
id = "verifier"
version = "1.0.0"
"#;
    let mut c = Composition::from_toml_str(text, Path::new("user.toml")).unwrap();
    assert_eq!(labels(&c), ["generic-investigator #1"]);
    c.apply_repo_overrides(&repo("[specialist.bug-review]\nenabled = true\n"))
        .unwrap();
    assert_eq!(
        labels(&c),
        ["generic-investigator #1", "bug-review #1", "bug-review #2"]
    );
}

#[test]
fn repository_file_errors_at_apply_time_leave_the_composition_unchanged() {
    let dynamic = Composition::load(&data("valid/dynamic-relative.toml")).unwrap();
    let cases: &[(&str, &Composition, ErrorKind, &str, (usize, usize))] = &[
        (
            "[specialist.security-review]\nenabled = false\n",
            &dynamic,
            ErrorKind::ForbiddenInRepository,
            "specialist.security-review.enabled",
            (2, 1),
        ),
        (
            "instructions = \"x\"\n[specialist.bug-review]\nenabled = true\n",
            &dynamic,
            ErrorKind::UnknownSpecialist,
            "specialist.bug-review",
            (2, 13),
        ),
        (
            "[specialist.security-review.budget]\nmax_turns = 1\n[specialist.generic-investigator]\nenabled = false\n",
            &Composition::builtin_panel(),
            ErrorKind::UnknownSpecialist,
            "specialist.security-review",
            (1, 13),
        ),
    ];
    for (file, composition, kind, key, (line, column)) in cases {
        let mut c = (*composition).clone();
        let error = c.apply_repo_overrides(&repo(file)).unwrap_err();
        assert_eq!(error.kind(), *kind, "{file}: {error}");
        let location = error.location().unwrap();
        assert_eq!(location.key.as_deref(), Some(*key), "{file}");
        let position = location.position.unwrap();
        assert_eq!((position.line, position.column), (*line, *column), "{file}");
        assert_eq!(labels(&c), labels(composition), "unchanged after error");
        assert_eq!(c.instructions, None, "unchanged after error");
    }
}

#[test]
fn repository_file_cannot_disable_every_specialist() {
    let mut c = Composition::builtin_panel();
    let file = "[specialist.instructions-review]\nenabled = false\n[specialist.bug-review]\nenabled = false\n[specialist.objective-review]\nenabled = false\n";
    let error = c.apply_repo_overrides(&repo(file)).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NoEnabledSpecialist);
    assert_eq!(labels(&c).len(), 5);
}

#[test]
fn repository_instructions_are_bounded() {
    let long = "x".repeat(vouch_host::manifest::MAX_INSTRUCTIONS_BYTES + 1);
    let error = RepoOverrides::from_toml_str(&format!("instructions = \"{long}\"\n")).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::BadValue);
    assert_eq!(
        error.location().unwrap().key.as_deref(),
        Some("instructions")
    );
    let fits = "x".repeat(vouch_host::manifest::MAX_INSTRUCTIONS_BYTES);
    assert!(RepoOverrides::from_toml_str(&format!("instructions = \"{fits}\"\n")).is_ok());
}

fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    }
}

#[test]
fn endpoint_precedence_is_flags_then_environment_then_manifest() {
    let manifest = ModelSection {
        base_url: Some("http://manifest/v1".into()),
        model: Some("manifest-model".into()),
        ..ModelSection::default()
    };
    let flags = EndpointFlags {
        base_url: Some("http://flag/v1".into()),
        model: Some("flag-model".into()),
        api_key_env: None,
    };
    const ENV: &[(&str, &str)] = &[(ENV_BASE_URL, "http://env/v1"), (ENV_MODEL, "env-model")];
    const EMPTY_ENV: &[(&str, &str)] = &[(ENV_BASE_URL, ""), (ENV_MODEL, "")];
    let none = EndpointFlags::default();
    let cases: &[(
        &EndpointFlags,
        &'static [(&str, &str)],
        &str,
        &str,
        SettingSource,
    )] = &[
        (
            &flags,
            ENV,
            "http://flag/v1",
            "flag-model",
            SettingSource::Flag,
        ),
        (
            &none,
            ENV,
            "http://env/v1",
            "env-model",
            SettingSource::Environment,
        ),
        (
            &none,
            &[],
            "http://manifest/v1",
            "manifest-model",
            SettingSource::Manifest,
        ),
        (
            &none,
            EMPTY_ENV,
            "http://manifest/v1",
            "manifest-model",
            SettingSource::Manifest,
        ),
    ];
    for (flags, env, base_url, model, source) in cases {
        let got = resolve_endpoint(flags, &env_of(env), &manifest).unwrap();
        assert_eq!(got.base_url, *base_url);
        assert_eq!(got.model, *model);
        assert_eq!(got.base_url_source, *source);
        assert_eq!(got.model_source, *source);
        assert_eq!(got.request_timeout.as_secs(), 120);
        assert_eq!(got.max_retries, 3);
        assert!(got.structured_outputs);
    }
}

#[test]
fn missing_endpoint_says_what_to_set() {
    let manifest = ModelSection::default();
    let error = resolve_endpoint(&EndpointFlags::default(), &env_of(&[]), &manifest).unwrap_err();
    assert_eq!(
        error,
        EndpointError::NotConfigured {
            base_url_missing: true,
            model_missing: true
        }
    );
    let shown = error.to_string();
    for needed in ["--base-url", "OPENAI_BASE_URL", "--model", "VOUCH_MODEL"] {
        assert!(shown.contains(needed), "{shown}");
    }

    let error = resolve_endpoint(
        &EndpointFlags::default(),
        &env_of(&[(ENV_BASE_URL, "http://127.0.0.1:8080/v1")]),
        &manifest,
    )
    .unwrap_err();
    let shown = error.to_string();
    assert!(shown.contains("VOUCH_MODEL"), "{shown}");
    assert!(
        !shown.contains("OPENAI_BASE_URL (e.g."),
        "only the missing setting: {shown}"
    );
}

#[test]
fn malformed_endpoint_values_are_refused_without_echoing_them() {
    let manifest = ModelSection {
        model: Some("m".into()),
        ..ModelSection::default()
    };
    let error = resolve_endpoint(
        &EndpointFlags::default(),
        &env_of(&[(ENV_BASE_URL, "user:secret@host/v1")]),
        &manifest,
    )
    .unwrap_err();
    assert_eq!(
        error,
        EndpointError::BadBaseUrl {
            setting: ENV_BASE_URL.into()
        }
    );
    assert!(!error.to_string().contains("secret"), "{error}");

    let flags = EndpointFlags {
        base_url: Some("http://h/v1".into()),
        api_key_env: Some("sk-123".into()),
        ..EndpointFlags::default()
    };
    let error = resolve_endpoint(&flags, &env_of(&[]), &manifest).unwrap_err();
    assert!(matches!(error, EndpointError::BadApiKeyEnv { .. }));
    assert!(!error.to_string().contains("sk-123"), "{error}");
}

#[test]
fn api_key_comes_from_the_named_variable_and_is_redacted() {
    const ENV: &[(&str, &str)] = &[
        (ENV_BASE_URL, "http://127.0.0.1:9/v1"),
        (ENV_MODEL, "m"),
        (ENV_API_KEY, "sk-default-key-value"),
        ("TEAM_KEY", "sk-team-key-value"),
    ];
    let default = resolve_endpoint(
        &EndpointFlags::default(),
        &env_of(ENV),
        &ModelSection::default(),
    )
    .unwrap();
    assert_eq!(
        default.api_key.as_ref().map(ApiKey::expose),
        Some("sk-default-key-value")
    );
    assert_eq!(default.api_key_env, ENV_API_KEY);

    let manifest = ModelSection {
        api_key_env: Some("TEAM_KEY".into()),
        ..ModelSection::default()
    };
    let named = resolve_endpoint(&EndpointFlags::default(), &env_of(ENV), &manifest).unwrap();
    assert_eq!(
        named.api_key.as_ref().map(ApiKey::expose),
        Some("sk-team-key-value")
    );
    let debug = format!("{named:?}");
    assert!(!debug.contains("sk-team-key-value"), "{debug}");
    assert!(debug.contains("<redacted>"), "{debug}");

    let unset = ModelSection {
        api_key_env: Some("UNSET_KEY".into()),
        ..ModelSection::default()
    };
    let keyless = resolve_endpoint(&EndpointFlags::default(), &env_of(ENV), &unset).unwrap();
    assert_eq!(keyless.api_key, None, "a local server needs no key");
}

#[test]
fn a_specialist_pinned_model_wins_and_flags_and_environment_set_the_default() {
    let c = Composition::load(&data("valid/every-key.toml")).unwrap();
    let pinned = c.instances()[1].model.clone();
    assert_eq!(pinned.as_deref(), Some("big-model"));
    let unpinned = c.instances()[0].model.clone();
    assert_eq!(unpinned, None);
    let flag = EndpointFlags {
        model: Some("flag-model".into()),
        ..EndpointFlags::default()
    };
    // (flags, environment, model of the pinned instance, of the unpinned one)
    let cases: Vec<(EndpointFlags, &[(&str, &str)], &str, &str)> = vec![
        (EndpointFlags::default(), &[], "big-model", "gpt-4o-mini"),
        (
            EndpointFlags::default(),
            &[(ENV_MODEL, "env-model")],
            "big-model",
            "env-model",
        ),
        (
            flag.clone(),
            &[(ENV_MODEL, "env-model")],
            "big-model",
            "flag-model",
        ),
        (flag, &[], "big-model", "flag-model"),
    ];
    for (flags, env, want_pinned, want_default) in cases {
        let endpoint = resolve_endpoint(&flags, &env_of(env), &c.model).unwrap();
        assert_eq!(
            endpoint.model_for(pinned.as_deref()),
            want_pinned,
            "{flags:?} {env:?}"
        );
        assert_eq!(
            endpoint.model_for(unpinned.as_deref()),
            want_default,
            "{flags:?} {env:?}"
        );
    }
}

#[test]
fn duplicate_label_points_at_both_entries() {
    let error = Composition::load(&data("invalid/duplicate-label-by-id.toml")).unwrap_err();
    let shown = error.to_string();
    assert!(shown.contains(":13:6: key `specialist[1].id`"), "{shown}");
    assert!(
        shown.contains("already used by specialist[0] (line 7)"),
        "{shown}"
    );
}
