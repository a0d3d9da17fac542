//! The synthetic repository generator agrees with the real git binary and with the
//! snapshot: statuses, paths and line counts of a generated change.

use std::collections::BTreeMap;

use vouch_core::snapshot::FileStatus;
use vouch_git::snapshot;
use vouch_testkit::git::git_at;
use vouch_testkit::synth::{
    ExpectedCounts, LONG_FILE_PATH, MINIFIED_PATH, SynthSpec, SynthStatus, generate_temp,
};

/// One path as `git diff -M` reports it: status letter, previous path, numstat counts
/// (`None` for binary).
#[derive(Debug, PartialEq, Eq)]
struct GitRow {
    status: char,
    previous: Option<String>,
    counts: Option<(u32, u32)>,
}

/// `git diff -M --name-status -z` and `--numstat -z` of `base..head`, keyed by current path.
fn git_rows(dir: &std::path::Path, base: &str, head: &str) -> BTreeMap<String, GitRow> {
    let range = format!("{base}..{head}");
    let names = git_at(dir, 0, &["diff", "-M", "--name-status", "-z", &range]);
    let mut rows = BTreeMap::new();
    let mut it = names.split('\0').filter(|s| !s.is_empty());
    while let Some(code) = it.next() {
        let status = code.chars().next().expect("status letter");
        let first = it.next().expect("path").to_string();
        let (path, previous) = if matches!(status, 'R' | 'C') {
            (it.next().expect("new path").to_string(), Some(first))
        } else {
            (first, None)
        };
        rows.insert(
            path,
            GitRow {
                status,
                previous,
                counts: None,
            },
        );
    }
    let nums = git_at(dir, 0, &["diff", "-M", "--numstat", "-z", &range]);
    let mut it = nums.split('\0');
    while let Some(head_field) = it.next() {
        if head_field.is_empty() {
            continue;
        }
        let mut cols = head_field.splitn(3, '\t');
        let (adds, dels) = (cols.next().unwrap(), cols.next().unwrap());
        let inline_path = cols.next().unwrap_or("");
        let path = if inline_path.is_empty() {
            let _old = it.next();
            it.next().expect("renamed path").to_string()
        } else {
            inline_path.to_string()
        };
        let counts = match (adds.parse(), dels.parse()) {
            (Ok(a), Ok(d)) => Some((a, d)),
            _ => None,
        };
        rows.get_mut(&path)
            .expect("numstat path in name-status")
            .counts = counts;
    }
    rows
}

#[test]
fn the_mix_has_the_stated_shares() {
    let mix = ExpectedCounts::mix(100);
    assert_eq!(
        mix,
        ExpectedCounts {
            modified: 70,
            added: 10,
            deleted: 8,
            renamed: 8,
            binary: 2,
            mode_only: 2
        }
    );
    let mix = ExpectedCounts::mix(5_000);
    assert_eq!(
        (mix.modified, mix.renamed, mix.total()),
        (3_500, 400, 5_000)
    );
    assert_eq!(
        ExpectedCounts::mix(7).modified,
        7,
        "shares round down; the rest is modified"
    );
}

#[test]
fn a_generated_change_matches_git_and_the_snapshot() {
    let spec = SynthSpec {
        unchanged: 20,
        minified: true,
        long_file: true,
        ..SynthSpec::new(100)
    };
    let (_dir, repo) = generate_temp(&spec);
    assert_eq!(
        repo.expected.total(),
        102,
        "100 of the mix plus the two extras"
    );
    assert_eq!(repo.changes.len(), 102);

    let git = git_rows(&repo.path, &repo.base, &repo.head);
    assert_eq!(
        git.len(),
        repo.changes.len(),
        "git sees every generated path: {git:?}"
    );
    let mut by_letter: BTreeMap<char, usize> = BTreeMap::new();
    for change in &repo.changes {
        let row = git
            .get(&change.path)
            .unwrap_or_else(|| panic!("{} not in git's diff", change.path));
        let letter = match change.status {
            SynthStatus::Added => 'A',
            SynthStatus::Deleted => 'D',
            SynthStatus::Renamed => 'R',
            _ => 'M',
        };
        assert_eq!(row.status, letter, "{}", change.path);
        assert_eq!(row.previous, change.previous_path, "{}", change.path);
        let expected = change.additions.zip(change.deletions);
        assert_eq!(row.counts, expected, "{}", change.path);
        *by_letter.entry(row.status).or_default() += 1;
    }
    let e = repo.expected;
    assert_eq!(by_letter[&'A'], e.added);
    assert_eq!(by_letter[&'D'], e.deleted);
    assert_eq!(by_letter[&'R'], e.renamed);
    assert_eq!(by_letter[&'M'], e.modified + e.binary + e.mode_only);

    let snap = snapshot(&repo.path, Some(&repo.base), &repo.head).expect("snapshot");
    assert_eq!(snap.files.len(), repo.changes.len());
    for (file, change) in snap.files.iter().zip(&repo.changes) {
        assert_eq!(file.path, change.path);
        let status = match change.status {
            SynthStatus::Modified | SynthStatus::Binary => FileStatus::Modified,
            SynthStatus::Added => FileStatus::Added,
            SynthStatus::Deleted => FileStatus::Deleted,
            SynthStatus::Renamed => FileStatus::Renamed,
            SynthStatus::ModeOnly => FileStatus::ModeOnly,
        };
        assert_eq!(file.status, status, "{}", file.path);
        assert_eq!(file.previous_path, change.previous_path, "{}", file.path);
        assert_eq!(
            file.binary,
            change.status == SynthStatus::Binary,
            "{}",
            file.path
        );
        if let Some((adds, dels)) = change.additions.zip(change.deletions) {
            assert_eq!(
                (file.additions, file.deletions),
                (adds, dels),
                "{}",
                file.path
            );
        }
    }
    let minified = snap.file(MINIFIED_PATH).expect("minified file changed");
    assert_eq!(minified.hunks.len(), 1, "one line, one hunk");
    // The one changed line is long: its three edited places are named by byte range, at
    // head and (the same places: an in-place edit) at base.
    let side = |revision| {
        let lines: Vec<_> = minified
            .long_lines
            .iter()
            .filter(|l| l.revision == revision)
            .collect();
        assert_eq!(lines.len(), 1, "{revision:?}: {:?}", minified.long_lines);
        lines[0]
    };
    let long_line = side(vouch_core::Revision::Head);
    assert_eq!(side(vouch_core::Revision::Base).changed, long_line.changed);
    assert_eq!(long_line.line, 1);
    assert_eq!(long_line.changed.len(), 3, "{:?}", long_line.changed);
    for (&(start, end), pct) in long_line.changed.iter().zip([10, 50, 90]) {
        let edit = (long_line.len as usize * pct / 100) as u32;
        assert!(
            start <= edit && edit + 8 <= end && end - start <= 128,
            "{start}..{end} vs {edit}"
        );
    }
    let long = snap.file(LONG_FILE_PATH).expect("long file changed");
    assert_eq!(long.hunks.len(), 3, "three distant edits, three hunks");
}

#[test]
fn the_same_seed_gives_the_same_commits_and_another_seed_does_not() {
    let (_a, one) = generate_temp(&SynthSpec::new(30));
    let (_b, two) = generate_temp(&SynthSpec::new(30));
    let (_c, other) = generate_temp(&SynthSpec {
        seed: 2,
        ..SynthSpec::new(30)
    });
    assert_eq!((&one.base, &one.head), (&two.base, &two.head));
    assert_ne!(one.head, other.head);
}
