//! Unicode normalisation for comparing keys and labels: NFKC, invisible characters
//! removed, and the Cyrillic and Greek letters that look Latin mapped to Latin.
//!
//! A key or label that needs any of this is suspicious in its own right: the schema's
//! keys and the labels the validator reads are plain ASCII, so a look-alike can only
//! be an attempt (or an accident) that would make a field or label read as another.

use unicode_normalization::UnicodeNormalization;

/// Zero-width, bidirectional-control and other invisible format characters.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{FFA0}' | '\u{E0000}'..='\u{E007F}')
}

/// Spaces other than the ASCII space (NBSP and friends).
fn is_odd_space(c: char) -> bool {
    c != ' ' && c != '\t' && c != '\n' && c != '\r' && c.is_whitespace()
}

/// Cyrillic and Greek look-alikes and the Latin letter each stands for.
const LOOKALIKES: &[(char, char)] = &[
    ('а', 'a'),
    ('в', 'b'),
    ('е', 'e'),
    ('к', 'k'),
    ('м', 'm'),
    ('н', 'h'),
    ('о', 'o'),
    ('р', 'p'),
    ('с', 'c'),
    ('т', 't'),
    ('у', 'y'),
    ('х', 'x'),
    ('і', 'i'),
    ('ј', 'j'),
    ('ѕ', 's'),
    ('ԁ', 'd'),
    ('ԛ', 'q'),
    ('ԝ', 'w'),
    ('ӏ', 'l'),
    ('һ', 'h'),
    ('ɡ', 'g'),
    ('А', 'A'),
    ('В', 'B'),
    ('Е', 'E'),
    ('К', 'K'),
    ('М', 'M'),
    ('Н', 'H'),
    ('О', 'O'),
    ('Р', 'P'),
    ('С', 'C'),
    ('Т', 'T'),
    ('Х', 'X'),
    ('І', 'I'),
    ('Ј', 'J'),
    ('Ѕ', 'S'),
    ('Ү', 'Y'),
    ('Ԁ', 'D'),
    ('α', 'a'),
    ('ο', 'o'),
    ('ν', 'v'),
    ('ι', 'i'),
    ('κ', 'k'),
    ('ρ', 'p'),
    ('τ', 't'),
    ('υ', 'u'),
    ('χ', 'x'),
    ('ε', 'e'),
    ('Α', 'A'),
    ('Β', 'B'),
    ('Ε', 'E'),
    ('Ζ', 'Z'),
    ('Η', 'H'),
    ('Ι', 'I'),
    ('Κ', 'K'),
    ('Μ', 'M'),
    ('Ν', 'N'),
    ('Ο', 'O'),
    ('Ρ', 'P'),
    ('Τ', 'T'),
    ('Υ', 'Y'),
    ('Χ', 'X'),
];

/// The Latin letter a Cyrillic or Greek look-alike stands for.
fn latin_for(c: char) -> Option<char> {
    LOOKALIKES
        .iter()
        .find(|(lookalike, _)| *lookalike == c)
        .map(|(_, latin)| *latin)
}

/// The comparison form of a key or label: NFKC, invisibles dropped, odd spaces made
/// ASCII spaces, look-alike letters made Latin.
pub(crate) fn skeleton(text: &str) -> String {
    text.nfkc()
        .filter(|c| !is_invisible(*c))
        .map(|c| {
            if is_odd_space(c) {
                ' '
            } else {
                latin_for(c).unwrap_or(c)
            }
        })
        .collect()
}

/// What makes a key or label suspicious: the characters that are invisible, odd
/// spaces or look-alikes, or that NFKC changes. Empty when the text is clean.
pub(crate) fn suspicious(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for c in text.chars() {
        let what = if is_invisible(c) {
            "invisible"
        } else if is_odd_space(c) {
            "non-ASCII space"
        } else if latin_for(c).is_some() {
            "look-alike letter"
        } else if c.to_string().nfkc().collect::<String>() != c.to_string() {
            "compatibility form"
        } else {
            continue;
        };
        let item = format!("U+{:04X} ({what})", c as u32);
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_alikes_and_invisibles_are_found_and_folded() {
        let table: &[(&str, &str, usize)] = &[
            ("narrative", "narrative", 0),
            ("nаrrative", "narrative", 1),     // Cyrillic a
            ("hand\u{200B}off", "handoff", 1), // zero-width space
            ("Files\u{00A0}reviewed", "Files reviewed", 1),
            ("ｍerge", "merge", 1),            // fullwidth m
            ("Dispοsition", "Disposition", 1), // Greek omicron
            ("Müller", "Müller", 0),
        ];
        for (text, folded, count) in table {
            assert_eq!(skeleton(text), *folded, "{text}");
            assert_eq!(
                suspicious(text).len(),
                *count,
                "{text}: {:?}",
                suspicious(text)
            );
        }
    }
}
