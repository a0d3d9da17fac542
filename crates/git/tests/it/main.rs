//! Integration tests of vouch-git on real repositories built in temporary directories
//! (one test binary; one module per theme).

mod errors;
mod fixture;
mod range;
mod reader_blobs;
mod reader_diff;
mod reader_files;
mod reader_search;
mod status;
mod support;
mod synth;

use vouch_core::snapshot::{ChangeSnapshot, ChangedFile};

/// The changed file at `path`, or a panic listing the paths that did change.
fn file<'a>(snapshot: &'a ChangeSnapshot, path: &str) -> &'a ChangedFile {
    snapshot.file(path).unwrap_or_else(|| {
        let paths: Vec<_> = snapshot.files.iter().map(|f| &f.path).collect();
        panic!("{path} is not in the snapshot; changed: {paths:?}")
    })
}

/// The snapshot's current paths, in order.
fn paths(snapshot: &ChangeSnapshot) -> Vec<&str> {
    snapshot.files.iter().map(|f| f.path.as_str()).collect()
}
