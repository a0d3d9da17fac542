//! `files`, `file` and `blob`: what the repository graph reads.

use vouch_core::source::Revision;
use vouch_git::{BlobContent, ReadError};

use crate::support::sources;

#[test]
fn the_file_list_holds_regular_files_only_in_tree_order() {
    let (_repo, _snap, reader) = sources();
    let head: Vec<String> = reader
        .files(Revision::Head)
        .unwrap()
        .into_iter()
        .map(|f| f.path)
        .collect();
    assert_eq!(
        head,
        [
            "big.txt",
            "bin.dat",
            "crlf.txt",
            "dir with space/ünï.txt",
            "docs/manual.md",
            "empty.txt",
            "long-lines.txt",
            "run.sh",
            "src/lib.rs",
            "src/new.rs",
            "wide.txt",
        ],
        "no symlink (link, escape), no submodule (vendor/sub)"
    );
    let base: Vec<String> = reader
        .files(Revision::Base)
        .unwrap()
        .into_iter()
        .map(|f| f.path)
        .collect();
    assert!(base.contains(&"old.txt".to_string()) && !base.contains(&"src/new.rs".to_string()));
}

#[test]
fn a_file_is_a_regular_file_and_links_are_never_followed() {
    let (_repo, _snap, reader) = sources();
    let lib = reader.file(Revision::Head, "./src//lib.rs").unwrap();
    assert_eq!(lib.path, "src/lib.rs");
    let listed = reader.files(Revision::Head).unwrap();
    assert!(listed.contains(&lib));
    for path in ["link", "escape", "vendor/sub", "src"] {
        let err = reader.file(Revision::Head, path).unwrap_err();
        assert!(matches!(err, ReadError::WrongKind { .. }), "{path}: {err}");
    }
    for path in ["../x", "/etc/passwd", ""] {
        let err = reader.file(Revision::Head, path).unwrap_err();
        assert!(matches!(err, ReadError::Refused { .. }), "{path}: {err}");
    }
    assert!(matches!(
        reader.file(Revision::Head, "old.txt").unwrap_err(),
        ReadError::NotFound { .. }
    ));
}

#[test]
fn a_blob_is_given_whole_unless_binary_or_over_the_bound() {
    let (_repo, _snap, reader) = sources();
    let id = |path: &str| reader.file(Revision::Head, path).unwrap().blob_id;
    assert_eq!(
        reader.blob(&id("crlf.txt"), 1024).unwrap(),
        BlobContent::Text(b"alpha\r\nbeta\r\n".to_vec())
    );
    assert_eq!(
        reader.blob(&id("bin.dat"), 1024).unwrap(),
        BlobContent::Binary
    );
    assert_eq!(
        reader.blob(&id("wide.txt"), 1024).unwrap(),
        BlobContent::TooLarge(50_001)
    );
    let tree_id = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
    assert!(matches!(
        reader.blob(tree_id, 1024),
        Err(ReadError::Git { .. })
    ));
}
