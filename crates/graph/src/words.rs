//! The words of a tree: which files name a word, read once per tree and shared by every
//! lookup, so a lookup costs what it finds, not the size of the repository.
//!
//! A word is a maximal run of name bytes ([`crate::text::is_word_byte`]), so a name
//! occurs in a file as a whole word exactly when it is one of the file's words: the
//! index gives the same files as searching each file's text, without the search. Words
//! are kept as 64-bit hashes; a collision only adds a candidate, which the caller checks
//! against the file's text or parsed index, so it can never add a result.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use vouch_git::{BlobContent, SourceReader, TreeFile};

use crate::text::MAX_FILE_BYTES;
use crate::text::is_word_byte;

/// Most (word, file) pairs one tree's index holds (12 bytes each). Files past the
/// bound are not indexed and are a candidate of every lookup: slower, never less.
pub const MAX_POSTINGS: usize = 8_000_000;

/// The words of one tree.
#[derive(Debug)]
pub(crate) struct WordIndex {
    /// The tree's regular files, in tree order.
    pub(crate) files: Vec<TreeFile>,
    /// The (word hash, file) pairs, sorted by hash then file, kept as two columns:
    /// `hashes[k]` names a word of file `postings[k]` (an index into `files`). Twelve
    /// bytes a pair, where a map of vectors spent several times that on repositories
    /// whose words are mostly distinct.
    hashes: Vec<u64>,
    postings: Vec<u32>,
    /// Files not indexed (over [`MAX_POSTINGS`]): candidates of every lookup.
    unindexed: Vec<u32>,
    /// Files larger than the graph reads ([`MAX_FILE_BYTES`]).
    pub(crate) too_large: u32,
}

/// The hash of a word as the index keeps it.
fn word_hash(word: &[u8]) -> u64 {
    let mut hasher = DefaultHasher::new();
    word.hash(&mut hasher);
    hasher.finish()
}

/// The distinct words of `content`, hashed.
fn words(content: &[u8]) -> HashSet<u64> {
    content
        .split(|&b| !is_word_byte(b))
        .filter(|w| !w.is_empty())
        .map(word_hash)
        .collect()
}

impl WordIndex {
    /// Reads every regular file of `files` once (binary files have no words; files
    /// larger than [`MAX_FILE_BYTES`] are counted in `too_large`).
    pub(crate) fn build(
        reader: &SourceReader,
        files: Vec<TreeFile>,
    ) -> Result<WordIndex, vouch_git::ReadError> {
        let mut pairs: Vec<(u64, u32)> = Vec::new();
        let mut unindexed = Vec::new();
        let mut too_large = 0;
        for (i, file) in files.iter().enumerate() {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            if pairs.len() >= MAX_POSTINGS {
                unindexed.push(i);
                continue;
            }
            match reader.blob(&file.blob_id, MAX_FILE_BYTES)? {
                BlobContent::Text(bytes) => pairs.extend(words(&bytes).into_iter().map(|w| (w, i))),
                BlobContent::Binary => {}
                BlobContent::TooLarge(_) => too_large += 1,
            }
        }
        pairs.sort_unstable();
        let (hashes, postings) = pairs.into_iter().unzip();
        Ok(WordIndex {
            files,
            hashes,
            postings,
            unindexed,
            too_large,
        })
    }

    /// Indexes into [`WordIndex::files`] of every file that may name one of `names` as a
    /// whole word, ascending (tree order). A name that is not a single word (it holds a
    /// byte that cannot continue a name) makes every file a candidate.
    pub(crate) fn candidates(&self, names: &[&str]) -> Vec<u32> {
        if names
            .iter()
            .any(|n| n.is_empty() || !n.bytes().all(is_word_byte))
        {
            return (0..self.files.len())
                .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
                .collect();
        }
        let mut out: Vec<u32> = names
            .iter()
            .flat_map(|n| self.files_naming(word_hash(n.as_bytes())))
            .chain(&self.unindexed)
            .copied()
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The files whose words include the word hashed `hash`, ascending.
    fn files_naming(&self, hash: u64) -> &[u32] {
        let start = self.hashes.partition_point(|&h| h < hash);
        let end = start + self.hashes[start..].partition_point(|&h| h == hash);
        &self.postings[start..end]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::contains_word;

    #[test]
    fn words_are_the_whole_words_of_the_text() {
        let cases: [(&str, &str, bool); 8] = [
            ("fn parse_line(x) {", "parse_line", true),
            ("fn parse_line(x) {", "parse", false),
            ("let $el = 1;", "$el", true),
            ("café()", "café", true),
            ("café()", "caf", false),
            ("a.b_c+d", "b_c", true),
            ("", "x", false),
            ("x", "x", true),
        ];
        for (text, name, expected) in cases {
            let found = words(text.as_bytes()).contains(&word_hash(name.as_bytes()));
            assert_eq!(found, expected, "{name:?} in {text:?}");
            assert_eq!(
                found,
                contains_word(text.as_bytes(), name),
                "{name:?} in {text:?}"
            );
        }
    }

    proptest::proptest! {
        /// The index and the text search agree on every text and every word.
        #[test]
        fn the_index_agrees_with_the_text_search(
            text in "[a-c_ $.(\u{e9}\n]{0,40}",
            name in "[a-c_\u{e9}]{1,3}",
        ) {
            let indexed = words(text.as_bytes()).contains(&word_hash(name.as_bytes()));
            proptest::prop_assert_eq!(indexed, contains_word(text.as_bytes(), &name));
        }
    }
}
