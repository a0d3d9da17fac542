//! Building workspace artifacts (binaries, plugin libraries) from a running test.
//!
//! Integration tests of one package cannot name another package's binary or cdylib, so
//! a test runs `cargo build -p <packages>` with the target directory and profile it was
//! itself built with (derived from its own path, `<target-dir>/<profile-dir>/deps/<test>`).
//! Cargo holds its build lock only while building, so the nested build works from a
//! running `cargo test`, and it is a no-op when the artifacts are fresh. Not supported:
//! `cargo test --target <triple>`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds `packages` (workspace package names) for this test's profile and returns
/// `<target-dir>/<profile-dir>`, where their binaries and `lib*.so` files are.
///
/// # Panics
/// When the nested build fails (its output is in the panic message).
pub fn build_packages(workspace_manifest: &Path, packages: &[&str]) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("profile directory")
        .to_path_buf();
    let target_dir = profile_dir.parent().expect("target directory");
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev".to_string(),
        Some(other) => other.to_string(),
        None => panic!("unexpected test executable path {}", exe.display()),
    };
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut command = Command::new(cargo);
    command
        .arg("build")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(workspace_manifest)
        .arg("--target-dir")
        .arg(target_dir)
        .arg("--profile")
        .arg(&profile);
    for p in packages {
        command.arg("-p").arg(p);
    }
    let output = command.output().expect("running cargo build");
    assert!(
        output.status.success(),
        "cargo build -p {packages:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    profile_dir
}
