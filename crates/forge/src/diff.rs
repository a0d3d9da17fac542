//! Which head lines of a pull request a forge accepts a line comment on: the added and
//! unchanged context lines of its diff hunks, as the forge itself serves the diff.

use std::collections::BTreeMap;

/// The commentable lines of one changed file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiffFile {
    /// The path before the change (differs from the head path for renames).
    pub old_path: String,
    /// Head line number → the base line number when the line is unchanged context
    /// (`None` for an added line).
    pub lines: BTreeMap<u32, Option<u32>>,
}

/// The commentable head lines of every file in a pull request's diff.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiffLines {
    files: BTreeMap<String, DiffFile>,
}

impl DiffLines {
    /// Adds one file's hunks (the `patch` of GitHub's files API, the `diff` of GitLab's
    /// merge-request diffs): text from its first `@@` on. A file without hunks (binary,
    /// too large, mode-only) has no commentable line.
    pub fn add_patch(&mut self, path: &str, old_path: &str, patch: &str) {
        let entry = self.files.entry(path.to_string()).or_default();
        entry.old_path = old_path.to_string();
        entry.lines.extend(hunk_lines(patch));
    }

    /// Parses a whole `git diff` (Gitea's `pulls/N.diff`): `diff --git` sections with
    /// `---`/`+++` headers and hunks.
    pub fn from_unified(text: &str) -> DiffLines {
        let mut out = DiffLines::default();
        let mut old: Option<String> = None;
        let mut new: Option<String> = None;
        let mut hunks = String::new();
        let flush = |old: &Option<String>,
                     new: &Option<String>,
                     hunks: &mut String,
                     out: &mut DiffLines| {
            if let Some(path) = new.clone().or_else(|| old.clone()) {
                let old_path = old.clone().unwrap_or_else(|| path.clone());
                out.add_patch(&path, &old_path, hunks);
            }
            hunks.clear();
        };
        let mut in_hunks = false;
        for line in text.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if let Some(rest) = line.strip_prefix("diff --git ") {
                flush(&old, &new, &mut hunks, &mut out);
                // A section with no hunks (binary, mode only, a pure rename) names its
                // file only here and in its extended headers.
                let same = same_path_header(rest);
                old = same.clone();
                new = same;
                in_hunks = false;
            } else if !in_hunks
                && let Some(path) = extended_header_path(line, &["rename from ", "copy from "])
            {
                old = Some(path);
            } else if !in_hunks
                && let Some(path) = extended_header_path(line, &["rename to ", "copy to "])
            {
                new = Some(path);
            } else if !in_hunks && line.starts_with("--- ") {
                old = header_path(&line[4..], "a/");
            } else if !in_hunks && line.starts_with("+++ ") {
                new = header_path(&line[4..], "b/");
            } else if line.starts_with("@@") {
                in_hunks = true;
                hunks.push_str(line);
                hunks.push('\n');
            } else if in_hunks {
                hunks.push_str(line);
                hunks.push('\n');
            }
        }
        flush(&old, &new, &mut hunks, &mut out);
        out
    }

    /// The file's commentable lines, if it is in the diff.
    pub fn file(&self, path: &str) -> Option<&DiffFile> {
        self.files.get(path)
    }

    /// The head path of every file in the diff, in path order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// True when every head line `start..=end` of `path` is commentable (so a comment
    /// spanning them sits inside one hunk).
    pub fn covers(&self, path: &str, start: u32, end: u32) -> bool {
        let Some(file) = self.files.get(path) else {
            return false;
        };
        start >= 1 && start <= end && (start..=end).all(|l| file.lines.contains_key(&l))
    }
}

/// The path of a `diff --git a/P b/P` header whose two sides name the same path (every
/// section but a rename or copy, whose extended headers name both).
fn same_path_header(rest: &str) -> Option<String> {
    if rest.starts_with('"') {
        let (a, b) = rest.split_once("\" \"")?;
        let a = header_path(&format!("{a}\""), "a/")?;
        let b = header_path(&format!("\"{b}"), "b/")?;
        return (a == b).then_some(a);
    }
    let path_len = rest.len().checked_sub(5)? / 2;
    let a = rest.get(2..2 + path_len)?;
    let b = rest.get(2 + path_len + 3..)?;
    (rest.starts_with("a/") && rest.get(2 + path_len..2 + path_len + 3) == Some(" b/") && a == b)
        .then(|| a.to_string())
}

/// The path of a `rename from`/`rename to`/`copy from`/`copy to` extended header line
/// starting with one of `prefixes` (C-quoted when git quoted it).
fn extended_header_path(line: &str, prefixes: &[&str]) -> Option<String> {
    let raw = prefixes.iter().find_map(|p| line.strip_prefix(p))?;
    header_path(raw, "")
}

/// A `---`/`+++` header's path: `/dev/null` is none; `a/`/`b/` prefixes are removed; a
/// C-quoted path (`"b/na\tme"`) is unquoted.
fn header_path(raw: &str, prefix: &str) -> Option<String> {
    let raw = raw.split('\t').next().unwrap_or(raw);
    if raw == "/dev/null" {
        return None;
    }
    let unquoted = match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) => unquote(inner),
        None => raw.to_string(),
    };
    Some(
        unquoted
            .strip_prefix(prefix)
            .map(str::to_string)
            .unwrap_or(unquoted),
    )
}

fn unquote(inner: &str) -> String {
    let mut bytes = Vec::new();
    let mut chars = inner.bytes().peekable();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match chars.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    match chars.peek() {
                        Some(&o @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(o - b'0');
                            chars.next();
                        }
                        _ => break,
                    }
                }
                bytes.push(u8::try_from(v).unwrap_or(b'?'));
            }
            Some(other) => bytes.push(other),
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `@@ -a[,b] +c[,d] @@` → (a, c).
fn hunk_start(header: &str) -> Option<(u32, u32)> {
    let rest = header.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let first = |s: &str| s.split(',').next().and_then(|n| n.parse::<u32>().ok());
    Some((first(old)?, first(new)?))
}

/// Head line → base line (for context) of every hunk in `patch`.
fn hunk_lines(patch: &str) -> BTreeMap<u32, Option<u32>> {
    let mut out = BTreeMap::new();
    let mut pos: Option<(u32, u32)> = None;
    for line in patch.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.starts_with("@@") {
            pos = hunk_start(line);
            continue;
        }
        let Some((old, new)) = pos.as_mut() else {
            continue;
        };
        match line.as_bytes().first() {
            Some(b'+') => {
                out.insert(*new, None);
                *new = new.saturating_add(1);
            }
            Some(b'-') => *old = old.saturating_add(1),
            Some(b' ') => {
                out.insert(*new, Some(*old));
                *new = new.saturating_add(1);
                *old = old.saturating_add(1);
            }
            // "\ No newline at end of file", or the empty string after the last newline.
            _ => {}
        }
    }
    out.remove(&0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PATCH: &str = "@@ -1,4 +1,5 @@\n a\n-b\n+B\n+B2\n c\n d\n@@ -20,2 +21,3 @@ fn x() {\n t\n+u\n v\n\\ No newline at end of file\n";

    #[test]
    fn hunks_give_added_and_context_lines() {
        let lines = hunk_lines(PATCH);
        let expected: BTreeMap<u32, Option<u32>> = [
            (1, Some(1)),
            (2, None),
            (3, None),
            (4, Some(3)),
            (5, Some(4)),
            (21, Some(20)),
            (22, None),
            (23, Some(21)),
        ]
        .into_iter()
        .collect();
        assert_eq!(lines, expected);
    }

    /// Every file of a whole diff is listed, also one whose section has no hunk and no
    /// `---`/`+++` lines: a binary file, a mode change, a pure rename.
    #[test]
    fn a_unified_diff_lists_files_without_hunks_too() {
        let text = "diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-x\n+y\n\
diff --git a/bin/tool.so b/bin/tool.so\nnew file mode 100644\nindex 0000000..e69de29\nBinary files /dev/null and b/bin/tool.so differ\n\
diff --git a/scripts/run.sh b/scripts/run.sh\nold mode 100644\nnew mode 100755\n\
diff --git a/docs/ci.yml b/.github/workflows/ci.yml\nsimilarity index 100%\nrename from docs/ci.yml\nrename to .github/workflows/ci.yml\n\
diff --git \"a/with space\" \"b/with space\"\nold mode 100644\nnew mode 100755\n";
        let d = DiffLines::from_unified(text);
        assert_eq!(
            d.paths().collect::<Vec<_>>(),
            [
                ".github/workflows/ci.yml",
                "bin/tool.so",
                "scripts/run.sh",
                "src/a.py",
                "with space"
            ]
        );
        assert_eq!(
            d.file(".github/workflows/ci.yml").unwrap().old_path,
            "docs/ci.yml"
        );
        assert!(d.covers("src/a.py", 1, 1));
    }

    #[test]
    fn covers_needs_every_line_in_the_diff() {
        let mut d = DiffLines::default();
        d.add_patch("src/a.rs", "src/a.rs", PATCH);
        let cases = [
            ("src/a.rs", 2, 3, true),
            ("src/a.rs", 1, 5, true),
            ("src/a.rs", 5, 21, false),
            ("src/a.rs", 6, 6, false),
            ("src/a.rs", 0, 1, false),
            ("src/a.rs", 3, 2, false),
            ("src/b.rs", 1, 1, false),
        ];
        for (path, s, e, want) in cases {
            assert_eq!(d.covers(path, s, e), want, "{path}:{s}-{e}");
        }
    }

    #[test]
    fn unified_diff_with_rename_new_file_and_deletion() {
        let text = "diff --git a/old.rs b/new.rs\nsimilarity index 90%\nrename from old.rs\nrename to new.rs\n--- a/old.rs\n+++ b/new.rs\n@@ -1,2 +1,2 @@\n-x\n+y\n z\ndiff --git a/gone.rs b/gone.rs\ndeleted file mode 100644\n--- a/gone.rs\n+++ /dev/null\n@@ -1 +0,0 @@\n-q\ndiff --git a/added.rs b/added.rs\nnew file mode 100644\n--- /dev/null\n+++ b/added.rs\n@@ -0,0 +1,2 @@\n+p\n+--- not a header\ndiff --git \"a/sp\\303\\244ce.rs\" \"b/sp\\303\\244ce.rs\"\n--- \"a/sp\\303\\244ce.rs\"\n+++ \"b/sp\\303\\244ce.rs\"\n@@ -3 +3 @@\n-a\n+b\n";
        let d = DiffLines::from_unified(text);
        let renamed = d.file("new.rs").expect("renamed file");
        assert_eq!(renamed.old_path, "old.rs");
        assert_eq!(renamed.lines.keys().copied().collect::<Vec<_>>(), [1, 2]);
        assert!(d.file("gone.rs").expect("deleted").lines.is_empty());
        assert!(d.covers("added.rs", 1, 2));
        assert!(d.covers("späce.rs", 3, 3));
    }

    proptest! {
        /// Hostile patches never panic, and every commentable line is at least 1.
        #[test]
        fn any_patch_parses_without_panic(text in "(@@ -[0-9]{1,10}(,[0-9]{1,3})? \\+[0-9]{1,10}(,[0-9]{1,3})? @@\n|[-+ \\\\]?[a-z\"]{0,5}\n|diff --git a/x b/x\n|\\+\\+\\+ [ab/\"\\\\0-7]{0,8}\n){0,40}") {
            let d = DiffLines::from_unified(&text);
            for file in d.files.values() {
                prop_assert!(file.lines.keys().all(|&l| l >= 1));
            }
            let lines = hunk_lines(&text);
            prop_assert!(!lines.contains_key(&0));
        }
    }
}
