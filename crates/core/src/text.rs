//! How source bytes are shown to a model: the one rendering every read, patch and
//! prefetch block uses.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Rule (design, "reads that tell the truth"): source bytes are shown as text with valid
/// UTF-8 as it is and every byte that is not part of valid UTF-8 as `\xNN` (two
/// upper-case hex digits). A change that only swaps such bytes (a Latin-1 `é` for `è`)
/// is therefore shown as a change; rendered as U+FFFD, both sides would read the same.
/// Valid UTF-8 is borrowed, never copied.
pub fn shown_text(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(shown_len(bytes));
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02X}");
        }
    }
    Cow::Owned(out)
}

/// Rule (design, "reads that tell the truth"): a line is shown without its line ending,
/// except that a line ending with `\r\n` (or a last line ending with `\r`) is shown
/// with [`CR_MARK`] after its text. Without it, a change of line ending alone (CRLF to
/// LF) would show two sides that read the same. The mark is not part of the line's
/// bytes: lengths, byte windows and changed ranges are over the text before the ending.
pub const CR_MARK: &str = "\u{240D}";

/// A line's bytes without a `\r` before its (already removed) `\n`, and whether it
/// had one: where every reader splits a line from its ending ([`CR_MARK`]).
pub fn split_cr(line: &[u8]) -> (&[u8], bool) {
    match line.strip_suffix(b"\r") {
        Some(text) => (text, true),
        None => (line, false),
    }
}

/// What follows a line's shown text: [`CR_MARK`] when it ends with `\r`, else nothing.
pub fn ending_mark(crlf: bool) -> &'static str {
    if crlf { CR_MARK } else { "" }
}

/// The length in bytes of [`shown_text`] of `bytes`, without building it: how the host
/// sizes what it shows.
pub fn shown_len(bytes: &[u8]) -> usize {
    if std::str::from_utf8(bytes).is_ok() {
        return bytes.len();
    }
    bytes
        .utf8_chunks()
        .map(|c| c.valid().len() + 4 * c.invalid().len())
        .sum()
}

/// How many leading bytes of `bytes` are shown within `max_shown` bytes of
/// [`shown_text`], never splitting a UTF-8 character: where a read bounded by what it
/// shows cuts a line. An invalid byte counts as its escape (4 bytes), so what a read
/// shows never exceeds its bound, whatever the bytes. For valid UTF-8 this is
/// the longest prefix of at most `max_shown` bytes that ends on a character boundary.
pub fn shown_prefix_len(bytes: &[u8], max_shown: usize) -> usize {
    let (mut raw, mut shown) = (0, 0);
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        if shown + valid.len() > max_shown {
            let mut end = max_shown - shown;
            while !valid.is_char_boundary(end) {
                end -= 1;
            }
            return raw + end;
        }
        (raw, shown) = (raw + valid.len(), shown + valid.len());
        for _ in chunk.invalid() {
            if shown + 4 > max_shown {
                return raw;
            }
            (raw, shown) = (raw + 1, shown + 4);
        }
    }
    raw
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn invalid_bytes_are_shown_as_escapes_and_valid_text_as_it_is() {
        let cases: &[(&[u8], &str)] = &[
            (b"", ""),
            (b"plain", "plain"),
            ("caf\u{e9} \u{1F600}".as_bytes(), "caf\u{e9} \u{1F600}"),
            // Latin-1 é and è: distinct, where U+FFFD would show both the same.
            (b"caf\xE9", "caf\\xE9"),
            (b"caf\xE8", "caf\\xE8"),
            // A cut sequence, a lone continuation byte, and an overlong encoding.
            (b"a\xE2\x82", "a\\xE2\\x82"),
            (b"\x80b", "\\x80b"),
            (b"\xC0\xAF", "\\xC0\\xAF"),
            // Valid text around an invalid byte stays as it is.
            ("\u{e9}\u{ff}".as_bytes(), "\u{e9}\u{ff}"),
            (b"x\xFFy\xC3\xA9", "x\\xFFy\u{e9}"),
        ];
        for &(bytes, want) in cases {
            assert_eq!(shown_text(bytes), want, "{bytes:?}");
            assert_eq!(shown_len(bytes), want.len(), "{bytes:?}");
        }
        assert!(matches!(shown_text(b"borrowed"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_carriage_return_before_the_line_end_is_split_off_and_marked() {
        // (line without its `\n`, text, ends with `\r`)
        let cases: &[(&[u8], &[u8], bool)] = &[
            (b"", b"", false),
            (b"a", b"a", false),
            (b"a\r", b"a", true),
            (b"\r", b"", true),
            // Only the last `\r` is the ending; one inside the line is text.
            (b"a\rb", b"a\rb", false),
            (b"a\r\r", b"a\r", true),
        ];
        for &(line, text, crlf) in cases {
            assert_eq!(split_cr(line), (text, crlf), "{line:?}");
        }
        assert_eq!(ending_mark(true), "\u{240D}");
        assert_eq!(ending_mark(false), "");
    }

    #[test]
    fn a_cut_by_what_is_shown_counts_an_invalid_byte_as_its_escape() {
        // (bytes, bound on what is shown, bytes shown)
        let cases: &[(&[u8], usize, usize)] = &[
            (b"abcdef", 10, 6),
            (b"abcdef", 3, 3),
            (b"abcdef", 0, 0),
            ("ab\u{e9}".as_bytes(), 4, 4),
            ("\u{1F600}x".as_bytes(), 3, 0),
            // A long run of continuation bytes is cut like any invalid bytes.
            (&[0x80; 100], 40, 10),
            ("ab\u{e9}".as_bytes(), 3, 2),
            (b"ab\xE9cd", 5, 2),
            (b"ab\xE9cd", 6, 3),
            (b"ab\xE9cd", 8, 5),
            (&[0xE9; 100], 40, 10),
        ];
        for &(bytes, max, want) in cases {
            assert_eq!(shown_prefix_len(bytes, max), want, "{bytes:?} within {max}");
        }
    }

    proptest! {
        /// For any bytes: the length is exact, valid UTF-8 is shown unchanged, and two
        /// different byte strings without a backslash are never shown the same.
        #[test]
        fn the_rendering_is_exact_in_length_and_tells_bytes_apart(
            a in proptest::collection::vec(any::<u8>(), 0..64),
            b in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            prop_assert_eq!(shown_len(&a), shown_text(&a).len());
            if let Ok(text) = std::str::from_utf8(&a) {
                let shown = shown_text(&a);
                prop_assert_eq!(shown.as_ref(), text);
            }
            if a != b && !a.contains(&b'\\') && !b.contains(&b'\\') {
                prop_assert_ne!(shown_text(&a), shown_text(&b));
            }
        }

        /// For any two lines (without their `\n`), from bytes weighted towards `\r`:
        /// shown as every reader shows a line (text, then the ending's mark), two
        /// different lines never read the same, a change of ending alone included. (A
        /// backslash or a literal mark in the text is the accepted ambiguity.)
        #[test]
        fn two_lines_that_differ_only_in_their_ending_read_differently(
            a in proptest::collection::vec(prop_oneof![Just(b'\r'), Just(b'a'), any::<u8>()], 0..16),
            b in proptest::collection::vec(prop_oneof![Just(b'\r'), Just(b'a'), any::<u8>()], 0..16),
        ) {
            let shown = |line: &[u8]| {
                let (text, crlf) = split_cr(line);
                format!("{}{}", shown_text(text), ending_mark(crlf))
            };
            let plain = |l: &[u8]| !l.contains(&b'\\') && !shown_text(l).contains(CR_MARK);
            if a != b && plain(&a) && plain(&b) {
                prop_assert_ne!(shown(&a), shown(&b));
            }
        }

        /// For any bytes and bound: what a cut by shown size shows fits the bound, splits
        /// no character, and one more unit would not fit; on valid UTF-8 it is the cut
        /// by bytes.
        #[test]
        fn a_cut_by_what_is_shown_fits_its_bound(
            a in proptest::collection::vec(any::<u8>(), 0..64),
            max in 0usize..80,
        ) {
            let cut = shown_prefix_len(&a, max);
            let whole = shown_text(&a);
            let shown = shown_text(&a[..cut]);
            prop_assert!(shown.len() <= max);
            prop_assert!(whole.starts_with(shown.as_ref()));
            for e in cut + 1..=a.len() {
                let longer = shown_text(&a[..e]);
                prop_assert!(!(whole.starts_with(longer.as_ref()) && longer.len() <= max), "{e}");
            }
            if std::str::from_utf8(&a).is_ok() {
                // Valid UTF-8: the bound is in bytes, and the cut a character boundary.
                prop_assert!(cut <= max && std::str::from_utf8(&a[..cut]).is_ok());
            }
        }
    }
}
