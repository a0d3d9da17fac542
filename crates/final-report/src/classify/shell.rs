//! Splitting a command line like a POSIX shell: simple commands, their words and
//! the files they redirect output to; wrappers and assignments before a program.

/// One simple command: its words and the files it redirects output to.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct SimpleCommand {
    pub words: Vec<String>,
    pub writes_to: Vec<String>,
}

/// Split a command line into simple commands (quote-aware; `&&`, `||`, `;`, `|`, `&`,
/// newlines and parentheses separate; `>`/`>>` targets are collected).
pub(crate) fn split_shell(line: &str) -> Vec<SimpleCommand> {
    let mut out = Vec::new();
    let mut cur = SimpleCommand::default();
    let mut word = String::new();
    let mut in_word = false;
    let mut redirect: Option<bool> = None; // Some(true): next word is an output target
    let mut chars = line.chars().peekable();
    let mut quote: Option<char> = None;

    let finish_word = |word: &mut String,
                       in_word: &mut bool,
                       cur: &mut SimpleCommand,
                       redirect: &mut Option<bool>| {
        if !*in_word {
            return;
        }
        let w = std::mem::take(word);
        *in_word = false;
        match redirect.take() {
            Some(true) => {
                if !w.starts_with('&')
                    && !matches!(w.as_str(), "/dev/null" | "/dev/stdout" | "/dev/stderr")
                {
                    cur.writes_to.push(w);
                }
            }
            Some(false) => {}
            None => cur.words.push(w),
        }
    };

    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            } else if c == '\\' && q == '"' {
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            } else {
                word.push(c);
            }
            continue;
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                in_word = true;
            }
            '\\' => {
                if let Some(n) = chars.next() {
                    word.push(n);
                    in_word = true;
                }
            }
            ' ' | '\t' => finish_word(&mut word, &mut in_word, &mut cur, &mut redirect),
            ';' | '|' | '&' | '\n' | '(' | ')' => {
                // `&>` and `>&` are redirections, handled below via '>'.
                if c == '&' && chars.peek() == Some(&'>') {
                    continue;
                }
                finish_word(&mut word, &mut in_word, &mut cur, &mut redirect);
                if !cur.words.is_empty() || !cur.writes_to.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                if matches!(chars.peek(), Some('&') | Some('|')) {
                    chars.next();
                }
            }
            '>' | '<' => {
                // A bare fd number before '>' (`2>`) is not a word.
                if in_word && word.chars().all(|d| d.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                } else {
                    finish_word(&mut word, &mut in_word, &mut cur, &mut redirect);
                }
                if c == '>' && chars.peek() == Some(&'>') {
                    chars.next();
                }
                redirect = Some(c == '>');
                // `>&2`: the target is a file descriptor, not a file.
                if c == '>' && chars.peek() == Some(&'&') {
                    chars.next();
                    word.push('&');
                    in_word = true;
                }
            }
            _ => {
                word.push(c);
                in_word = true;
            }
        }
    }
    finish_word(&mut word, &mut in_word, &mut cur, &mut redirect);
    if !cur.words.is_empty() || !cur.writes_to.is_empty() {
        out.push(cur);
    }
    out
}

/// Programs that run the command after their own options (and, for `timeout`, its
/// duration), with the options of each that take a value.
pub(super) const WRAPPERS: &[(&str, &[&str])] = &[
    (
        "sudo",
        &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U"],
    ),
    ("doas", &["-u", "-C"]),
    ("nice", &["-n"]),
    ("ionice", &["-c", "-n", "-p"]),
    ("env", &["-u", "-C", "-S", "--unset", "--chdir"]),
    ("xargs", &["-I", "-n", "-P", "-L", "-s", "-d", "-E", "-a"]),
    ("timeout", &["-s", "-k", "--signal", "--kill-after"]),
    ("stdbuf", &["-i", "-o", "-e"]),
    ("setsid", &[]),
    ("time", &[]),
    ("command", &[]),
    ("nohup", &[]),
    ("exec", &[]),
    ("builtin", &[]),
    // Multi-call binaries: `busybox sed -i …` is the applet it names.
    ("busybox", &[]),
    ("toybox", &[]),
];

/// Shell words that open or continue a compound command; the command follows them
/// (`then git push`, `do gh pr merge 4`, `! git push`).
pub(super) const SHELL_KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "do", "while", "until", "!", "{", "time",
];

/// `words` after a wrapper's own options (and `timeout`'s duration).
pub(super) fn after_wrapper<'w>(wrapper: &str, words: &'w [String]) -> &'w [String] {
    let takes_value = WRAPPERS
        .iter()
        .find(|(name, _)| *name == wrapper)
        .map_or(&[][..], |(_, flags)| *flags);
    let mut rest = words;
    while let Some(w) = rest.first().filter(|w| w.starts_with('-') && w.len() > 1) {
        let skip = if takes_value.contains(&w.as_str()) {
            2
        } else {
            1
        };
        rest = rest.get(skip..).unwrap_or(&[]);
    }
    if wrapper == "timeout" {
        rest = rest.get(1..).unwrap_or(&[]);
    }
    rest
}

pub(super) fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}
