//! `vouch specialist new`: the scaffolded crate builds with cargo and loads through the
//! registry with its sha256 pin.
//!
//! The scaffold module is compiled into this test directly (`#[path]`), since a binary
//! crate exposes no library. The crate is written under `CARGO_TARGET_TMPDIR` and built
//! offline into the target directory this test was built in (derived from the test
//! executable's path, `<target-dir>/<profile-dir>/deps/scaffold-<hash>`), with the
//! workspace's `Cargo.lock` copied in and the workspace's dev-profile debug settings
//! passed as `--config`, so the dependencies already built for the workspace are reused
//! instead of rebuilt.

#[path = "../src/scaffold.rs"]
#[allow(dead_code)]
mod scaffold;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use vouch_host::registry::{DynamicPin, Origin, Registry, sha256_file};

fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.ancestors()
        .nth(3)
        .expect("<target-dir>/<profile>/deps/<exe>")
        .to_path_buf()
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn scaffolded_plugin_builds_and_loads_with_its_sha256_pin() {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("scaffold-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the scaffold directory");

    let root = scaffold::scaffold("probe-review", &dir).expect("scaffold");
    assert_eq!(root, dir.join("probe-review"));
    for file in [
        "Cargo.toml",
        "src/lib.rs",
        ".gitignore",
        "vendor/vouch-abi/Cargo.toml",
        "vendor/vouch-abi/src/lib.rs",
        "vendor/vouch-specialist-kit/Cargo.toml",
        "vendor/vouch-specialist-kit/src/contract.rs",
    ] {
        assert!(root.join(file).is_file(), "{file} missing");
    }
    let again = scaffold::scaffold("probe-review", &dir).unwrap_err();
    assert!(again.to_string().contains("already exists"), "{again}");
    assert!(scaffold::scaffold("Bad_Name", &dir).is_err());

    // The crate depends on nothing of the folder vouch was built from: an installed
    // vouch has no such folder.
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(
        !manifest.contains(workspace_root().canonicalize().unwrap().to_str().unwrap())
            && !manifest.contains("crates/abi")
            && !manifest.contains("crates/specialist-kit"),
        "{manifest}"
    );
    assert!(
        manifest.contains(r#"vouch-abi = { path = "vendor/vouch-abi" }"#)
            && manifest
                .contains(r#"vouch-specialist-kit = { path = "vendor/vouch-specialist-kit" }"#),
        "{manifest}"
    );
    std::fs::copy(workspace_root().join("Cargo.lock"), root.join("Cargo.lock"))
        .expect("copy the workspace lock file");
    let target = target_dir();
    let output = Command::new(env!("CARGO"))
        .arg("build")
        .arg("--offline")
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"))
        .args(["--config", r#"profile.dev.debug="line-tables-only""#])
        .args(["--config", r#"profile.dev.package."*".debug=false"#])
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("run cargo build");
    assert!(
        output.status.success(),
        "the scaffolded crate does not build:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let library = target.join("debug").join(format!(
        "{}probe_review{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let sha256 = sha256_file(&library).expect("hash the built library");
    let pin = DynamicPin {
        id: "probe-review".into(),
        version: "0.1.0".into(),
        library,
        sha256,
    };
    // `vouch specialist pin` prints the entry a manifest needs, read from the library.
    let printed = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(["specialist", "pin"])
        .arg(&pin.library)
        .output()
        .expect("run vouch specialist pin");
    assert!(printed.status.success(), "{printed:?}");
    let entry: toml::Value = toml::from_str(&String::from_utf8_lossy(&printed.stdout)).unwrap();
    let entry = &entry["specialist"][0];
    assert_eq!(entry["id"].as_str(), Some("probe-review"));
    assert_eq!(entry["version"].as_str(), Some("0.1.0"));
    assert_eq!(entry["role"].as_str(), Some("reviewer"));
    assert_eq!(entry["sha256"].as_str(), Some(pin.sha256.as_str()));
    assert_eq!(
        Path::new(entry["library"].as_str().unwrap()),
        pin.library.canonicalize().unwrap()
    );
    let wrong_id = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(["specialist", "pin", "--id", "other-review"])
        .arg(&pin.library)
        .output()
        .unwrap();
    assert_eq!(wrong_id.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&wrong_id.stdout).contains("--id"));

    let mut registry = Registry::new();
    let handle = registry.load(&pin).expect("load the scaffolded plugin");
    assert_eq!(handle.descriptor().id, "probe-review");
    assert_eq!(
        handle.origin(),
        &Origin::Dynamic {
            path: pin.library.clone(),
            sha256: pin.sha256.clone()
        }
    );

    // The role prompt, the candidate contract and the candidate parser all answer.
    let request = serde_json::from_value(json!({
        "payloadVersion": 1,
        "label": "probe-review #1",
        "change": {"baseSha": "b", "headSha": "h", "files": []},
        "toolsAvailable": true
    }))
    .expect("a prompt request");
    let prompt = handle.render_prompt(&request).expect("render");
    assert!(
        prompt.system.contains("You are probe-review"),
        "{}",
        prompt.system
    );
    assert!(prompt.user.contains("probe-review #1"), "{}", prompt.user);
    let schema = handle
        .contract(&serde_json::from_value(json!({"expectedFiles": ["a.rs"]})).unwrap())
        .expect("contract");
    assert!(
        schema["properties"]["candidates"]["maxItems"].is_u64(),
        "{schema}"
    );
    let parsed = handle
        .parse(
            &json!({"candidates": [], "coverage": {"complete": true, "reviewedFiles": ["a.rs"]}}),
        )
        .expect("parse");
    assert_eq!(serde_json::to_value(parsed).unwrap()["kind"], "candidates");

    // The built library stays in the target directory; the sources can go.
    let _ = std::fs::remove_dir_all(&dir);
}
