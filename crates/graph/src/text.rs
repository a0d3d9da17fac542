//! Lines and bounded strings, the same way the rest of vouch shows source, and the
//! largest file the graph reads.

/// Files larger than this are not parsed or searched (and counted in the result).
pub const MAX_FILE_BYTES: usize = 1024 * 1024;

/// The lines of `content` split at `\n`, without a `\r` before it (git's numbering);
/// bytes that are not UTF-8 shown as [`vouch_core::shown_text`] shows them.
pub(crate) fn lines(content: &[u8]) -> Vec<String> {
    lines_and_crlf(content).0
}

/// [`lines`], and the numbers (1-based, ascending) of the lines that ended with `\r\n`:
/// each is shown with [`vouch_core::CR_MARK`] after its text.
pub(crate) fn lines_and_crlf(content: &[u8]) -> (Vec<String>, Vec<u32>) {
    let (mut lines, mut crlf) = (Vec::new(), Vec::new());
    if content.is_empty() {
        return (lines, crlf);
    }
    let body = content.strip_suffix(b"\n").unwrap_or(content);
    for (i, l) in body.split(|&b| b == b'\n').enumerate() {
        let (text, cr) = vouch_core::split_cr(l);
        lines.push(vouch_core::shown_text(text).into_owned());
        if cr {
            crlf.push(i as u32 + 1);
        }
    }
    (lines, crlf)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_ending_with_crlf_are_named_for_their_mark() {
        // (content, lines, lines that ended with `\r\n`)
        let cases: &[(&[u8], &[&str], &[u32])] = &[
            (b"", &[], &[]),
            (b"a\nb\n", &["a", "b"], &[]),
            (b"a\r\nb\nc\r", &["a", "b", "c"], &[1, 3]),
            (b"a\rb\r\n", &["a\rb"], &[1]),
            (b"caf\xE9\r\n", &["caf\\xE9"], &[1]),
        ];
        for &(content, lines, crlf) in cases {
            assert_eq!(
                lines_and_crlf(content),
                (lines.iter().map(|l| l.to_string()).collect(), crlf.to_vec()),
                "{content:?}"
            );
        }
    }
}
