//! Loads real plugin libraries (`.so`/`.dylib`) with libloading through the registry.
//!
//! # How the libraries are found
//!
//! The test plugins are cdylib crates under `tests/plugins/*` (workspace members). The
//! first test that needs one runs, once per test process,
//! `$CARGO build -p vouch-test-plugin-echo -p vouch-test-plugin-panicking
//! -p vouch-test-plugin-malformed` with `--manifest-path` of the workspace, the
//! `--target-dir` and `--profile` this test binary was built with (derived from its own
//! path, `<target-dir>/<profile-dir>/deps/plugins-<hash>`), and then loads
//! `<target-dir>/<profile-dir>/lib<crate>.so`. Cargo holds its build lock only while
//! building, so the nested build works from a running `cargo test`, and it is a no-op
//! when the libraries are fresh (e.g. after `cargo test --workspace`, which builds them
//! as members). Not supported: `cargo test --target <triple>` (the profile directory
//! then sits under `<target-dir>/<triple>/`).
//!
//! Tests that must observe whether a library got mapped use a private copy of the
//! library (unique path), so parallel tests that load the shared file do not interfere.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::json;
use vouch_abi::{ABI_MAJOR, ParsedReply, TABLE_SIZE};
use vouch_host::registry::{DynamicPin, Origin, PluginError, Registry, sha256_file};
use vouch_specialist_kit::sample;

const PLUGIN_PACKAGES: [&str; 3] = [
    "vouch-test-plugin-echo",
    "vouch-test-plugin-panicking",
    "vouch-test-plugin-malformed",
];

/// `<target-dir>/<profile-dir>` holding the freshly built test plugins.
fn profile_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        let deps = exe.parent().expect("deps directory");
        let profile_dir = deps.parent().expect("profile directory").to_path_buf();
        let target_dir = profile_dir.parent().expect("target directory");
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") => "dev".to_string(),
            Some(other) => other.to_string(),
            None => panic!("unexpected test executable path {}", exe.display()),
        };
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
        let mut cargo = Command::new(env!("CARGO"));
        cargo
            .arg("build")
            .arg("--manifest-path")
            .arg(&manifest)
            .arg("--target-dir")
            .arg(target_dir)
            .arg("--profile")
            .arg(&profile);
        for package in PLUGIN_PACKAGES {
            cargo.arg("-p").arg(package);
        }
        let output = cargo
            .output()
            .expect("run cargo build for the test plugins");
        assert!(
            output.status.success(),
            "building the test plugins failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        profile_dir
    })
}

/// The built library of a test plugin package.
fn library(package: &str) -> PathBuf {
    let file = format!(
        "{}{}{}",
        std::env::consts::DLL_PREFIX,
        package.replace('-', "_"),
        std::env::consts::DLL_SUFFIX
    );
    let path = profile_dir().join(file);
    assert!(path.is_file(), "{} was not built", path.display());
    path
}

fn pin(id: &str, version: &str, package: &str) -> DynamicPin {
    let library = library(package);
    let sha256 = sha256_file(&library).expect("hash the library");
    DynamicPin {
        id: id.into(),
        version: version.into(),
        library,
        sha256,
    }
}

fn echo_pin() -> DynamicPin {
    pin("test-echo", "1.2.3", "vouch-test-plugin-echo")
}

fn malformed_pin(id: &str) -> DynamicPin {
    pin(id, "0.1.0", "vouch-test-plugin-malformed")
}

/// True when a file at `path` is mapped into this process.
fn is_mapped(path: &Path) -> bool {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("read /proc/self/maps");
    let path = path.to_str().expect("UTF-8 path");
    maps.lines().any(|line| line.ends_with(path))
}

/// A private copy of the echo library at a path no other test uses.
fn private_echo_copy(name: &str) -> PathBuf {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("plugin-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create the copy directory");
    let copy = dir.join(format!("lib{name}.so"));
    std::fs::copy(library("vouch-test-plugin-echo"), &copy).expect("copy the library");
    copy
}

#[test]
fn pinned_library_loads_and_round_trips_every_method() {
    let mut registry = Registry::new();
    let pin = echo_pin();
    let handle = registry.load(&pin).expect("load the echo plugin");

    assert_eq!(handle.descriptor().id, "test-echo");
    assert_eq!(handle.descriptor().version, "1.2.3");
    assert_eq!(
        handle.origin(),
        &Origin::Dynamic {
            path: pin.library.clone(),
            sha256: pin.sha256.clone()
        }
    );

    let mut request = sample::prompt_request();
    request.label = "echo #1".into();
    let prompt = handle.render_prompt(&request).expect("render");
    assert_eq!(prompt.system, "echo system for echo #1");
    assert_eq!(
        prompt.user,
        format!(
            "{} files at {}",
            request.change.files.len(),
            request.change.head_sha
        )
    );

    let schema = handle
        .contract(&sample::contract_request())
        .expect("contract");
    assert_eq!(schema["type"], "object");
    assert!(schema["properties"]["coverage"].is_object(), "{schema}");

    let reply =
        json!({"candidates": [], "coverage": {"complete": true, "reviewedFiles": ["a.rs"]}});
    let ParsedReply::Candidates(parsed) = handle.parse(&reply).expect("parse") else {
        panic!("echo parses candidate replies");
    };
    assert_eq!(parsed.coverage.reviewed_files, ["a.rs"]);

    // The specialist's own errors come back as `Method` errors with its message.
    match handle.parse(&json!({"candidates": []})) {
        Err(PluginError::Method {
            method, message, ..
        }) => {
            assert_eq!(method, "parse");
            assert!(message.contains("`coverage`"), "{message}");
        }
        other => panic!("expected a method error, got {other:?}"),
    }
    request.label.clear();
    assert!(matches!(
        handle.render_prompt(&request),
        Err(PluginError::Method { .. })
    ));

    // Lookup by id and version; loading the same pin again is the same specialist.
    assert_eq!(
        registry.get("test-echo", "1.2.3").unwrap().descriptor().id,
        "test-echo"
    );
    registry.load(&pin).expect("same pin again");
    assert_eq!(registry.specialists().len(), 1);
    match registry.get("test-echo", "2.0.0") {
        Err(e @ PluginError::WrongVersion { .. }) => {
            let text = e.to_string();
            assert!(text.contains("2.0.0") && text.contains("1.2.3"), "{text}");
        }
        other => panic!("expected a version error, got {other:?}"),
    }
    assert!(matches!(
        registry.get("nobody", "1.0.0"),
        Err(PluginError::NotRegistered { .. })
    ));

    // Handles are shared across threads.
    let cloned = handle.clone();
    let from_thread = std::thread::spawn(move || cloned.contract(&Default::default()))
        .join()
        .expect("thread");
    assert!(from_thread.is_ok());
}

#[test]
fn wrong_sha256_is_refused_before_the_library_is_loaded() {
    let copy = private_echo_copy("wrong_sha");
    let good = sha256_file(&copy).expect("hash");
    let bad = "0".repeat(64);
    let pin = DynamicPin {
        id: "test-echo".into(),
        version: "1.2.3".into(),
        library: copy.clone(),
        sha256: bad.clone(),
    };

    let err = Registry::new().load(&pin).unwrap_err();
    match &err {
        PluginError::Sha256Mismatch {
            path,
            expected,
            found,
        } => {
            assert_eq!(path, &copy);
            assert_eq!(expected, &bad);
            assert_eq!(found, &good);
        }
        other => panic!("expected a sha256 mismatch, got {other:?}"),
    }
    assert!(err.to_string().contains(copy.to_str().unwrap()), "{err}");
    assert!(!is_mapped(&copy), "the refused library was mapped");

    // The same file with its real hash (upper case is accepted) does get mapped, so the
    // check above can see a load.
    let pin = DynamicPin {
        sha256: good.to_uppercase(),
        ..pin
    };
    Registry::new()
        .load(&pin)
        .expect("load with the right hash");
    assert!(is_mapped(&copy), "the accepted library is not mapped");
    // Unlinking a mapped library is fine; the mapping stays until the process exits.
    let _ = std::fs::remove_file(&copy);
}

#[test]
fn wrong_abi_major_is_refused_naming_both_versions_and_the_file() {
    let pin = malformed_pin("test-wrong-abi");
    match Registry::new().load(&pin) {
        Err(
            e @ PluginError::AbiMajor {
                expected, found, ..
            },
        ) => {
            assert_eq!((expected, found), (ABI_MAJOR, 999));
            assert!(e.to_string().contains(pin.library.to_str().unwrap()), "{e}");
        }
        other => panic!("expected an ABI major error, got {other:?}"),
    }
}

#[test]
fn wrong_version_is_refused_naming_both_versions() {
    let pin = DynamicPin {
        version: "2.0.0".into(),
        ..echo_pin()
    };
    let err = Registry::new().load(&pin).unwrap_err();
    match &err {
        PluginError::VersionMismatch {
            expected, found, ..
        } => assert_eq!((expected.as_str(), found.as_str()), ("2.0.0", "1.2.3")),
        other => panic!("expected a version mismatch, got {other:?}"),
    }
    assert!(
        err.to_string().contains(pin.library.to_str().unwrap()),
        "{err}"
    );
}

#[test]
fn a_panicking_plugin_returns_errors_and_keeps_working() {
    let mut registry = Registry::new();
    let handle = registry
        .load(&pin(
            "test-panicking",
            "0.1.0",
            "vouch-test-plugin-panicking",
        ))
        .expect("load");
    let mut request = sample::prompt_request();

    request.label = "panic".into();
    match handle.render_prompt(&request) {
        Err(PluginError::Panicked {
            method, message, ..
        }) => {
            assert_eq!(method, "render_prompt");
            assert_eq!(message, "render_prompt was asked to panic");
        }
        other => panic!("expected a caught panic, got {other:?}"),
    }

    request.label = "calm #1".into();
    let prompt = handle.render_prompt(&request).expect("the next call works");
    assert_eq!(prompt.user, "calm #1");

    match handle.parse(&json!({"x": 1})) {
        Err(PluginError::Panicked { message, .. }) => {
            assert_eq!(message, r#"parse cannot handle {"x":1}"#);
        }
        other => panic!("expected a caught panic, got {other:?}"),
    }
    assert!(handle.contract(&Default::default()).is_ok());
}

#[test]
fn a_missing_symbol_names_the_symbol_and_the_file() {
    let pin = DynamicPin {
        id: "test-missing".into(),
        ..echo_pin()
    };
    match Registry::new().load(&pin) {
        Err(e @ PluginError::MissingSymbol { .. }) => {
            let text = e.to_string();
            assert!(text.contains("`vouch_plugin_test_missing`"), "{text}");
            assert!(text.contains(pin.library.to_str().unwrap()), "{text}");
        }
        other => panic!("expected a missing symbol, got {other:?}"),
    }
}

#[test]
fn broken_tables_are_refused_with_what_was_expected_and_found() {
    match Registry::new().load(&malformed_pin("test-short-table")) {
        Err(PluginError::ShortTable {
            expected, found, ..
        }) => assert_eq!((expected, found), (TABLE_SIZE, 16)),
        other => panic!("expected a short table, got {other:?}"),
    }
    assert!(matches!(
        Registry::new().load(&malformed_pin("test-null-table")),
        Err(PluginError::NullTable { .. })
    ));
    match Registry::new().load(&malformed_pin("test-liar")) {
        Err(PluginError::IdMismatch {
            expected, found, ..
        }) => assert_eq!(
            (expected.as_str(), found.as_str()),
            ("test-liar", "someone-else")
        ),
        other => panic!("expected an id mismatch, got {other:?}"),
    }
    match Registry::new().load(&malformed_pin("test-future-payload")) {
        Err(PluginError::PayloadVersion { found, .. }) => assert_eq!(found, 99),
        other => panic!("expected a payload version error, got {other:?}"),
    }
    match Registry::new().load(&malformed_pin("test-describe-panics")) {
        Err(PluginError::Describe { message, .. }) => {
            assert!(message.contains("describe was asked to panic"), "{message}");
        }
        other => panic!("expected a describe error, got {other:?}"),
    }
}

#[test]
fn an_unreadable_library_is_a_read_error_naming_the_file() {
    let pin = DynamicPin {
        id: "test-echo".into(),
        version: "1.2.3".into(),
        library: PathBuf::from("/nonexistent/libvouch_nothing.so"),
        sha256: "0".repeat(64),
    };
    match Registry::new().load(&pin) {
        Err(e @ PluginError::Read { .. }) => {
            assert!(
                e.to_string().contains("/nonexistent/libvouch_nothing.so"),
                "{e}"
            );
        }
        other => panic!("expected a read error, got {other:?}"),
    }
}
