//! Lines and bounded strings, the same way the rest of vouch shows source, and the
//! largest file the graph reads.

/// Files larger than this are not parsed or searched (and counted in the result).
pub const MAX_FILE_BYTES: usize = 1024 * 1024;

/// The lines of `content` split at `\n`, without a `\r` before it (git's numbering);
/// bytes that are not UTF-8 shown as [`vouch_core::shown_text`] shows them.
pub(crate) fn lines(content: &[u8]) -> Vec<String> {
    if content.is_empty() {
        return Vec::new();
    }
    let body = content.strip_suffix(b"\n").unwrap_or(content);
    body.split(|&b| b == b'\n')
        .map(|l| vouch_core::shown_text(l.strip_suffix(b"\r").unwrap_or(l)).into_owned())
        .collect()
}

/// Cuts `s` to at most `max` bytes at a char boundary.
pub(crate) fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Whether `name` occurs in `content` as a whole word (not inside a longer name).
pub(crate) fn contains_word(content: &[u8], name: &str) -> bool {
    word_positions(content, name.as_bytes()).next().is_some()
}

/// Byte offsets where `word` occurs as a whole word.
pub(crate) fn word_positions<'a>(
    content: &'a [u8],
    word: &'a [u8],
) -> impl Iterator<Item = usize> + 'a {
    let n = word.len();
    memchr::memmem::find_iter(content, word)
        .filter(move |_| n > 0)
        .filter(move |&i| {
            let before = i == 0 || !is_word_byte(content[i - 1]);
            let after = i + n >= content.len() || !is_word_byte(content[i + n]);
            before && after
        })
}

/// A byte that can continue a name in the supported languages.
pub(crate) fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}
