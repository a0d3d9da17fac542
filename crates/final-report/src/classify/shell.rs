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
    let mut sp = Splitter::default();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(q) = sp.quote {
            sp.quoted(c, q, &mut chars);
            continue;
        }
        match c {
            '\'' | '"' => {
                sp.quote = Some(c);
                sp.in_word = true;
            }
            '\\' => {
                if let Some(n) = chars.next() {
                    sp.word.push(n);
                    sp.in_word = true;
                }
            }
            ' ' | '\t' => sp.finish_word(),
            ';' | '|' | '&' | '\n' | '(' | ')' => sp.separator(c, &mut chars),
            '>' | '<' => sp.redirection(c, &mut chars),
            _ => {
                sp.word.push(c);
                sp.in_word = true;
            }
        }
    }
    sp.finish_word();
    sp.finish_command();
    sp.out
}

/// The state of [`split_shell`] between characters.
#[derive(Default)]
struct Splitter {
    out: Vec<SimpleCommand>,
    cur: SimpleCommand,
    word: String,
    in_word: bool,
    /// Some(true): the next word is an output target; Some(false): an input.
    redirect: Option<bool>,
    quote: Option<char>,
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

impl Splitter {
    /// A character inside quote `q`: the closing quote ends it; in double quotes a
    /// backslash escapes the next character.
    fn quoted(&mut self, c: char, q: char, chars: &mut Chars) {
        if c == q {
            self.quote = None;
        } else if c == '\\' && q == '"' {
            if let Some(n) = chars.next() {
                self.word.push(n);
            }
        } else {
            self.word.push(c);
        }
    }

    /// Ends the current word: a redirect target (unless a descriptor or a device) or
    /// a word of the command.
    fn finish_word(&mut self) {
        if !self.in_word {
            return;
        }
        let w = std::mem::take(&mut self.word);
        self.in_word = false;
        match self.redirect.take() {
            Some(true) => {
                if !w.starts_with('&')
                    && !matches!(w.as_str(), "/dev/null" | "/dev/stdout" | "/dev/stderr")
                {
                    self.cur.writes_to.push(w);
                }
            }
            Some(false) => {}
            None => self.cur.words.push(w),
        }
    }

    /// Ends the current simple command, kept if it has words or targets.
    fn finish_command(&mut self) {
        if !self.cur.words.is_empty() || !self.cur.writes_to.is_empty() {
            self.out.push(std::mem::take(&mut self.cur));
        }
    }

    /// A separator (`;`, `|`, `&`, newline, parenthesis; `&&` and `||` as one) ends the
    /// command; `&>` is a redirection, left to the `>` that follows.
    fn separator(&mut self, c: char, chars: &mut Chars) {
        if c == '&' && chars.peek() == Some(&'>') {
            return;
        }
        self.finish_word();
        self.finish_command();
        if matches!(chars.peek(), Some('&') | Some('|')) {
            chars.next();
        }
    }

    /// `>`, `>>` or `<`: a bare fd number before it (`2>`) is not a word, and `>&2`'s
    /// target is a file descriptor, not a file.
    fn redirection(&mut self, c: char, chars: &mut Chars) {
        if self.in_word && self.word.chars().all(|d| d.is_ascii_digit()) {
            self.word.clear();
            self.in_word = false;
        } else {
            self.finish_word();
        }
        if c == '>' && chars.peek() == Some(&'>') {
            chars.next();
        }
        self.redirect = Some(c == '>');
        if c == '>' && chars.peek() == Some(&'&') {
            chars.next();
            self.word.push('&');
            self.in_word = true;
        }
    }
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
