//! Classifying session commands and tool calls by what they do to the world.
//!
//! Commands are split like a POSIX shell would split them (quotes, `&&`, `||`, `;`,
//! `|`, redirections) and each simple command is classified by its program and
//! subcommand. The lists are deliberately small and documented in
//! docs/final-report.md; a command the lists do not know is treated as read-only.

use serde_json::Value;

use crate::model::MutationCategory;

/// What a command or tool call does, as far as the rules care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Runs tests.
    TestRun,
    /// A local `git merge` / `git pull` (including into the main checkout).
    LocalMerge,
    /// Restores a tree after a merge: `git merge --abort`, `git reset --hard|--merge`.
    MergeRestore,
    /// Creates, edits or deletes files.
    FileEdit,
    /// `git worktree add|remove|move|prune`.
    WorktreeAddRemove,
    /// Other worktree or index changes (checkout, switch, stash, add, rebase, ...).
    WorktreeChange,
    /// Ref updates (fetch, commit, branch, tag, update-ref).
    RefUpdate,
    /// `git push`.
    Push,
    /// Reading local configuration or forge-client profiles/auth.
    ConfigInspection,
    /// Activating or changing a forge profile or credentials for the session.
    ProfileActivation,
    /// Creating, submitting or dismissing a forge review (`approve` when it approves).
    ForgeReview { approve: bool },
    /// Merging on the forge.
    ForgeMerge,
    /// Any other forge write (comments, labels, closing, API writes).
    ForgeWrite,
}

impl Kind {
    /// Mutation categories that may record this kind; empty for non-mutations.
    pub(crate) fn categories(self) -> &'static [MutationCategory] {
        use MutationCategory::*;
        match self {
            Kind::FileEdit => &[FileEditsByReviewer, CleanupMutations],
            Kind::WorktreeAddRemove | Kind::WorktreeChange | Kind::MergeRestore => {
                &[WorktreeIndexMutations, CleanupMutations]
            }
            Kind::LocalMerge => &[WorktreeIndexMutations, GitRefMutations],
            Kind::RefUpdate => &[GitRefMutations],
            Kind::Push => &[GitRefMutations, ExternalStateMutations, McpForgeMutations],
            Kind::ForgeReview { .. } => &[ReviewMutations],
            Kind::ForgeMerge => &[MergeMutations],
            Kind::ForgeWrite => &[McpForgeMutations, ExternalStateMutations, CleanupMutations],
            Kind::TestRun | Kind::ConfigInspection | Kind::ProfileActivation => &[],
        }
    }

    /// A short description for messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Kind::TestRun => "a test run",
            Kind::LocalMerge => "a local merge",
            Kind::MergeRestore => "a merge abort/reset",
            Kind::FileEdit => "a file edit",
            Kind::WorktreeAddRemove => "a worktree add/remove",
            Kind::WorktreeChange => "a worktree/index change",
            Kind::RefUpdate => "a git ref update",
            Kind::Push => "a git push",
            Kind::ConfigInspection => "a local config/profile inspection",
            Kind::ProfileActivation => "a profile activation",
            Kind::ForgeReview { .. } => "a review mutation",
            Kind::ForgeMerge => "a merge",
            Kind::ForgeWrite => "a forge mutation",
        }
    }
}

/// Collapse runs of whitespace to one space and trim: how commands are compared.
pub(crate) fn normalize(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join(" ")
}

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

/// Everything a command line does, over all its simple commands.
pub(crate) fn classify_command(line: &str) -> Vec<Kind> {
    classify_nested(line, 0)
}

/// Most levels of command substitution looked into (hostile nesting cannot exhaust the
/// stack).
const MAX_SUBSTITUTION_DEPTH: usize = 8;

fn classify_nested(line: &str, depth: usize) -> Vec<Kind> {
    let mut kinds = Vec::new();
    // What a command substitution (`` `…` ``, `$(…)`) runs is a command too.
    let inner = match depth < MAX_SUBSTITUTION_DEPTH {
        true => substitutions(line),
        false => vec![],
    };
    for inner in inner {
        for kind in classify_nested(inner, depth + 1) {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
    }
    for simple in split_shell(line) {
        for kind in classify_simple(&simple) {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
    }
    kinds
}

/// The command lines inside `` `…` `` and `$(…)` of `line` (outermost; an unclosed one
/// runs to the end).
fn substitutions(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find(['`', '$']) {
        let after = &rest[at + 1..];
        if rest[at..].starts_with('`') {
            let end = after.find('`').unwrap_or(after.len());
            out.push(&after[..end]);
            rest = after.get(end + 1..).unwrap_or("");
        } else if let Some(inner) = after.strip_prefix('(') {
            let mut depth = 1usize;
            let end = inner
                .char_indices()
                .find(|&(_, c)| {
                    depth = match c {
                        '(' => depth + 1,
                        ')' => depth - 1,
                        _ => depth,
                    };
                    depth == 0
                })
                .map_or(inner.len(), |(i, _)| i);
            out.push(&inner[..end]);
            rest = inner.get(end + 1..).unwrap_or("");
        } else {
            rest = after;
        }
    }
    out
}

/// Programs that run the command after their own options (and, for `timeout`, its
/// duration), with the options of each that take a value.
const WRAPPERS: &[(&str, &[&str])] = &[
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
const SHELL_KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "do", "while", "until", "!", "{", "time",
];

/// `words` after a wrapper's own options (and `timeout`'s duration).
fn after_wrapper<'w>(wrapper: &str, words: &'w [String]) -> &'w [String] {
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

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

const PROFILE_VARS: &[&str] = &[
    "TOKEN", "PROFILE", "GH_HOST", "GITEA", "FORGEJO", "GITHUB", "GITLAB", "TEA_",
];

pub(crate) fn classify_simple(simple: &SimpleCommand) -> Vec<Kind> {
    let mut kinds = Vec::new();
    if !simple.writes_to.is_empty() {
        kinds.push(Kind::FileEdit);
    }
    let mut words: &[String] = &simple.words;
    // A standalone assignment or `export` of a profile/credential variable activates it.
    let assigns_profile = |w: &[String]| {
        w.iter().any(|a| {
            is_assignment(a)
                && PROFILE_VARS
                    .iter()
                    .any(|v| a.split('=').next().unwrap_or("").contains(v))
        })
    };
    if words.first().is_some_and(|w| w == "export") || words.iter().all(|w| is_assignment(w)) {
        if assigns_profile(words) {
            kinds.push(Kind::ProfileActivation);
        }
        return kinds;
    }
    // Skip wrappers and per-command assignments.
    loop {
        match words.first().map(String::as_str) {
            Some(w) if is_assignment(w) => words = &words[1..],
            Some(w) if SHELL_KEYWORDS.contains(&w) => words = &words[1..],
            Some("env") => {
                words = after_wrapper("env", &words[1..]);
                if words.is_empty() {
                    kinds.push(Kind::ConfigInspection);
                }
            }
            Some(w) if WRAPPERS.iter().any(|(name, _)| *name == w) => {
                words = after_wrapper(w, &words[1..])
            }
            // `eval` runs its words, joined, as a command line of its own.
            Some("eval") => {
                kinds.extend(classify_command(&words[1..].join(" ")));
                return kinds;
            }
            _ => break,
        }
    }
    let Some(first) = words.first() else {
        return kinds;
    };
    let program = first.rsplit('/').next().unwrap_or(first).to_owned();
    let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    if lower.iter().any(|w| w == "profile")
        && lower
            .iter()
            .any(|w| matches!(w.as_str(), "activate" | "use" | "switch" | "select" | "set"))
    {
        kinds.push(Kind::ProfileActivation);
    }
    match program.as_str() {
        "git" => kinds.extend(classify_git(&args)),
        "gh" => kinds.extend(classify_gh(&args)),
        "tea" => kinds.extend(classify_tea(&args)),
        "glab" => kinds.extend(classify_glab(&args)),
        "curl" | "wget" | "http" | "https" | "xh" => kinds.extend(classify_http(&args)),
        "bash" | "sh" | "zsh" => {
            let script = args
                .iter()
                .position(|a| *a == "-c" || *a == "-lc")
                .and_then(|pos| args.get(pos + 1));
            if let Some(script) = script {
                kinds.extend(classify_command(script));
            }
        }
        "source" | "."
            if args
                .iter()
                .any(|a| a.contains("profile") || a.contains("env") || a.contains("rc")) =>
        {
            kinds.push(Kind::ProfileActivation);
        }
        "printenv" => kinds.push(Kind::ConfigInspection),
        "touch" | "tee" | "cp" | "mv" | "rm" | "rmdir" | "mkdir" | "ln" | "chmod" | "chown"
        | "truncate" | "install" | "patch"
            if !(program == "tee" && args.iter().all(|a| a.starts_with('-'))) =>
        {
            kinds.push(Kind::FileEdit);
        }
        "sed" | "perl" if edits_in_place(&program, &args) => kinds.push(Kind::FileEdit),
        "dd" if args.iter().any(|a| a.starts_with("of=")) => kinds.push(Kind::FileEdit),
        "find" => kinds.extend(find_actions(&args)),
        "cargo" | "rustfmt" | "gofmt" | "go" if rewrites_sources(&program, &args) => {
            kinds.push(Kind::FileEdit)
        }
        _ => {}
    }
    if is_test_run(&program, &args) {
        kinds.push(Kind::TestRun);
    }
    if is_config_read(&program, &args) {
        kinds.push(Kind::ConfigInspection);
    }
    kinds
}

/// What `find` does to the files it finds: `-delete` removes them, and each
/// `-exec`/`-execdir`/`-ok`/`-okdir COMMAND … ;|+` runs a command (classified like any
/// other; a nested `find`'s own actions are found by the same scan).
fn find_actions(args: &[&str]) -> Vec<Kind> {
    let mut kinds = Vec::new();
    if args.contains(&"-delete") {
        kinds.push(Kind::FileEdit);
    }
    let is_action = |a: &&str| matches!(*a, "-exec" | "-execdir" | "-ok" | "-okdir");
    for (i, _) in args.iter().enumerate().filter(|(_, a)| is_action(a)) {
        let words: Vec<String> = args[i + 1..]
            .iter()
            .take_while(|a| !matches!(**a, ";" | "+") && !is_action(a))
            .map(|a| (*a).to_owned())
            .collect();
        if words
            .first()
            .is_none_or(|w| w.rsplit('/').next() == Some("find"))
        {
            continue;
        }
        for kind in classify_simple(&SimpleCommand {
            words,
            writes_to: Vec::new(),
        }) {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
    }
    kinds
}

/// Whether a formatter or fixer rewrites source files: `cargo fmt` and `rustfmt`
/// without `--check`, `cargo fix`, `cargo clippy --fix`, `go fmt`, `gofmt -w`.
fn rewrites_sources(program: &str, args: &[&str]) -> bool {
    let has = |flag: &str| args.contains(&flag);
    // `cargo +nightly fmt`: the toolchain comes before the subcommand.
    let sub = args
        .iter()
        .find(|a| !a.starts_with('+'))
        .copied()
        .unwrap_or("");
    match program {
        "cargo" => match sub {
            "fmt" => !has("--check"),
            "fix" => true,
            "clippy" => has("--fix"),
            _ => false,
        },
        "rustfmt" => !has("--check") && !args.iter().any(|a| a.starts_with("--emit")),
        "gofmt" => args.iter().any(|a| *a == "-w" || a.starts_with("-w=")),
        "go" => sub == "fmt",
        _ => false,
    }
}

/// The class of configuration, credential or profile material a path names, if any.
///
/// Classes, by path shape rather than a fixed list of files: credentials (`.netrc`,
/// `.git-credentials`, `.ssh/`, `.aws/`, keys, names with `token`/`secret`/`credential`),
/// forge-client configuration (`~/.config/gh|tea|glab|...`, `hosts.yml`), agent
/// configuration (`.claude`, `.codex`, `mcp.json`), git configuration (`.gitconfig`,
/// `.config/git`, `.git/config`), environment files (`.env*`), package-registry
/// configuration (`.npmrc`, `.pypirc`), profiles (names with `profile`) and any other
/// dotfile or `.config/` entry of a home directory.
pub(crate) fn config_path_class(arg: &str) -> Option<&'static str> {
    let lower = arg.trim_matches(|c| c == '"' || c == '\'').to_lowercase();
    let path_like = lower.contains('/') || lower.starts_with('.') || lower.starts_with('~');
    let parts: Vec<&str> = lower.split('/').filter(|p| !p.is_empty()).collect();
    let name = parts.last().copied().unwrap_or("");
    const SOURCE: &[&str] = &[
        ".rs", ".py", ".go", ".ts", ".js", ".java", ".c", ".h", ".md", ".kt", ".rb", ".snap",
    ];
    let named_secret = ["token", "secret", "credential"]
        .iter()
        .any(|w| name.contains(w))
        && !SOURCE.iter().any(|x| name.ends_with(x));
    let has = |c: &str| parts.contains(&c);
    if !path_like && !matches!(name, "hosts.yml" | "mcp.json" | "auth.json" | "credentials") {
        return None;
    }
    if [
        ".netrc",
        "_netrc",
        ".git-credentials",
        ".ssh",
        ".aws",
        ".gnupg",
        ".docker",
        ".kube",
    ]
    .iter()
    .any(|c| has(c))
        || named_secret
        || name == "auth.json"
        || name.starts_with("id_rsa")
        || name.starts_with("id_ed25519")
        || [".pem", ".key", ".p12", ".pfx"]
            .iter()
            .any(|x| name.ends_with(x))
    {
        return Some("credentials");
    }
    let after_config = parts.windows(2).find(|w| w[0] == ".config").map(|w| w[1]);
    if matches!(
        after_config,
        Some("gh" | "tea" | "glab" | "gitea" | "forgejo" | "hub" | "glab-cli" | "codeberg")
    ) || name == "hosts.yml"
    {
        return Some("forge-client configuration");
    }
    if [".claude", ".codex", ".cursor", ".gemini"]
        .iter()
        .any(|c| has(c))
        || name == "mcp.json"
        || name == ".mcp.json"
    {
        return Some("agent configuration");
    }
    if name == ".gitconfig" || after_config == Some("git") || lower.ends_with(".git/config") {
        return Some("git configuration");
    }
    if name == ".env" || name.starts_with(".env.") || name == ".envrc" {
        return Some("environment file");
    }
    if matches!(name, ".npmrc" | ".pypirc" | ".yarnrc" | ".pip")
        || lower.ends_with(".cargo/credentials.toml")
    {
        return Some("package-registry configuration");
    }
    if name.contains("profile") {
        return Some("profile");
    }
    let home = lower.starts_with("~/")
        || lower.starts_with("$home/")
        || lower.starts_with("${home}/")
        || lower.starts_with("/root/")
        || (parts.first() == Some(&"home") && lower.starts_with('/'));
    if has(".config") || (home && parts.iter().skip(1).any(|p| p.starts_with('.'))) {
        return Some("home configuration");
    }
    None
}

fn is_config_read(program: &str, args: &[&str]) -> bool {
    if matches!(
        program,
        "cd" | "pushd" | "echo" | "printf" | "git" | "source" | "."
    ) {
        return false;
    }
    args.iter()
        .filter(|a| !a.starts_with('-'))
        .any(|a| config_path_class(a).is_some())
}

/// Whether `sed` or `perl` edits its files in place: `--in-place[=SUFFIX]`, or `i` in a
/// cluster of short options (`-i`, `-i.bak`, `-Ei`, `-ni`, `-pi`, `-0pi`, `-pie`).
///
/// A cluster is read like the program reads it: letters that take no value are skipped,
/// and a letter that takes the rest of the cluster (or the next word) as its value
/// (sed's `e`, `f`, `l`; perl's `e`, `E`, `I`, `M`, `m`, `x`, `C`, `d`, `D`) ends it
/// before any `i` after it counts.
fn edits_in_place(program: &str, args: &[&str]) -> bool {
    let takes_value: &[char] = if program == "sed" {
        &['e', 'f', 'l']
    } else {
        &['e', 'E', 'I', 'M', 'm', 'x', 'C', 'd', 'D']
    };
    args.iter().any(|a| {
        if let Some(long) = a.strip_prefix("--") {
            return long == "in-place" || long.starts_with("in-place=");
        }
        let Some(cluster) = a.strip_prefix('-') else {
            return false;
        };
        cluster
            .chars()
            .take_while(|c| !takes_value.contains(c))
            .any(|c| c == 'i')
    })
}

/// The directory a test runner is pointed at instead of its working directory, as
/// written (relative to it): cargo's `--manifest-path P` (P's directory), `--prefix`,
/// `--cwd`, `--directory` (npm, yarn, make), and `-C DIR` of make, go and pnpm.
pub(crate) fn runner_dir(words: &[&str]) -> Option<String> {
    let program = words.first()?.rsplit('/').next().unwrap_or_default();
    let mut args = words[1..].iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v)),
            _ => (*arg, None),
        };
        let short_c = flag == "-C" && matches!(program, "make" | "go" | "pnpm");
        let known = matches!(
            flag,
            "--manifest-path" | "--prefix" | "--cwd" | "--directory"
        );
        if !(known || short_c) {
            continue;
        }
        let value = inline.or_else(|| args.next().copied())?;
        if flag == "--manifest-path" {
            return Some(match value.rsplit_once('/') {
                Some(("", _)) => "/".to_owned(),
                Some((dir, _)) => dir.to_owned(),
                None => ".".to_owned(),
            });
        }
        return Some(value.to_owned());
    }
    None
}

/// The program a launcher runs and its arguments, after the launcher's own options:
/// `npx`/`bunx`/`pnpx`/`uvx PROGRAM`, `uv`/`poetry`/`pipenv`/`hatch`/`pdm`/`rye`/
/// `pixi`/`conda run PROGRAM`, `pipx run`, `npm`/`pnpm`/`yarn exec`, `pnpm`/`yarn
/// dlx`, `bun x`, and a Python interpreter's `-m MODULE` (the module is the program:
/// `python -m pytest -m fast` runs pytest with `-m fast`). `None` for anything else.
fn launched<'a, 'w>(program: &str, args: &'a [&'w str]) -> Option<(&'w str, &'a [&'w str])> {
    if is_python(program) {
        return python_module(args);
    }
    let rest = match (program, args.first().copied()) {
        ("npx" | "bunx" | "pnpx" | "uvx", _) => args,
        (
            "uv" | "poetry" | "pipenv" | "hatch" | "pdm" | "rye" | "pixi" | "conda" | "pipx",
            Some("run"),
        )
        | ("npm" | "pnpm" | "yarn", Some("exec"))
        | ("pnpm" | "yarn", Some("dlx"))
        | ("bun", Some("x")) => &args[1..],
        _ => return None,
    };
    // The launcher's options that take a value (`npx -p pkg`, `uv run --with x`,
    // `conda run -n env`); other options stand alone; `--` ends them.
    const WITH_VALUE: &[&str] = &[
        "-p",
        "--package",
        "--with",
        "--python",
        "--extra",
        "--group",
        "--env",
        "-e",
        "-n",
        "--name",
        "--project",
        "--directory",
        "--spec",
        "--call",
        "-c",
    ];
    let mut i = 0;
    while let Some(a) = rest.get(i) {
        if *a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') {
            break;
        }
        i += if WITH_VALUE.contains(a) { 2 } else { 1 };
    }
    let launched = rest.get(i)?;
    Some((
        launched.rsplit('/').next().unwrap_or(launched),
        rest.get(i + 1..).unwrap_or(&[]),
    ))
}

fn is_python(program: &str) -> bool {
    matches!(program, "python" | "python3" | "py" | "pypy" | "pypy3")
        || program
            .strip_prefix("python3.")
            .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()))
}

/// A Python interpreter's `-m MODULE` (or `-mMODULE`) and the module's arguments: the
/// interpreter's options before it (`-u`, `-X dev`, `-W error`) are its own, and a
/// script or `-c` ends them.
fn python_module<'a, 'w>(args: &'a [&'w str]) -> Option<(&'w str, &'a [&'w str])> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if *a == "-m" {
            return Some((args.get(i + 1)?, args.get(i + 2..).unwrap_or(&[])));
        }
        if let Some(module) = a.strip_prefix("-m") {
            return Some((module, &args[i + 1..]));
        }
        if !a.starts_with('-') || *a == "-c" || *a == "-" {
            return None;
        }
        i += if matches!(*a, "-W" | "-X" | "-Q") {
            2
        } else {
            1
        };
    }
    None
}

/// The test runner a command runs, looking through launchers ([`launched`]), and its
/// own arguments.
pub(crate) fn runner<'a, 'w>(program: &'w str, args: &'a [&'w str]) -> (&'w str, &'a [&'w str]) {
    let mut current = (program.rsplit('/').next().unwrap_or(program), args);
    for _ in 0..4 {
        match launched(current.0, current.1) {
            Some(inner) => current = inner,
            None => break,
        }
    }
    current
}

pub(crate) fn is_test_run(program: &str, args: &[&str]) -> bool {
    let (program, args) = runner(program, args);
    let first = args.first().copied().unwrap_or("");
    match program {
        "pytest" | "py.test" | "tox" | "nox" | "jest" | "vitest" | "mocha" | "rspec"
        | "phpunit" | "ctest" | "cargo-nextest" | "unittest" => true,
        "cargo" => matches!(first, "test" | "nextest" | "t"),
        "go" | "dotnet" | "mix" | "swift" | "deno" | "bun" | "hatch" => first == "test",
        "npm" | "pnpm" | "yarn" => {
            first == "test"
                || first == "t"
                || (first == "run" && args.get(1).is_some_and(|s| s.starts_with("test")))
        }
        "make" | "just" | "ninja" => args
            .iter()
            .any(|a| matches!(*a, "test" | "check" | "tests")),
        "mvn" | "gradle" | "gradlew" | "./gradlew" => args
            .iter()
            .any(|a| matches!(*a, "test" | "verify" | "check")),
        "bundle" => args.contains(&"rspec") || args.windows(2).any(|w| w == ["exec", "rake"]),
        _ => false,
    }
}

/// Skip git's global options (`-C <path>`, `-c k=v`, `--git-dir=...`, ...).
pub(crate) fn git_subcommand<'a>(args: &'a [&'a str]) -> (&'a str, &'a [&'a str]) {
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace" {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            return (a, &args[i + 1..]);
        }
    }
    ("", &[])
}

fn classify_git(args: &[&str]) -> Vec<Kind> {
    let (sub, rest) = git_subcommand(args);
    let has = |flag: &str| rest.contains(&flag);
    let positional = rest.iter().filter(|a| !a.starts_with('-')).count();
    match sub {
        "merge" if has("--abort") || has("--quit") => vec![Kind::MergeRestore],
        "merge" => vec![Kind::LocalMerge],
        "pull" => vec![Kind::LocalMerge, Kind::RefUpdate],
        "rebase" | "cherry-pick" | "revert" if has("--abort") || has("--quit") => {
            vec![Kind::MergeRestore]
        }
        "rebase" | "cherry-pick" | "revert" | "am" => vec![Kind::WorktreeChange, Kind::RefUpdate],
        "reset" if has("--hard") || has("--merge") || has("--keep") => vec![Kind::MergeRestore],
        "reset" | "checkout" | "switch" | "restore" | "add" | "rm" | "mv" | "clean"
        | "sparse-checkout" => {
            let mut k = vec![Kind::WorktreeChange];
            if matches!(sub, "checkout" | "switch")
                && (has("-b") || has("-B") || has("-c") || has("-C"))
            {
                k.push(Kind::RefUpdate);
            }
            k
        }
        "stash" if matches!(rest.first(), Some(&"list") | Some(&"show")) => vec![],
        "stash" => vec![Kind::WorktreeChange],
        "apply" if has("--check") || has("--stat") => vec![],
        "apply" => vec![Kind::FileEdit],
        "worktree" => match rest.first() {
            Some(&"add") | Some(&"remove") | Some(&"move") | Some(&"prune") => {
                vec![Kind::WorktreeAddRemove]
            }
            _ => vec![],
        },
        "commit" | "fetch" | "update-ref" | "replace" => vec![Kind::RefUpdate],
        "push" => vec![Kind::Push],
        "branch" => {
            const READ: &[&str] = &[
                "--list",
                "-l",
                "-a",
                "-r",
                "--all",
                "--remotes",
                "--show-current",
                "--contains",
                "-v",
                "-vv",
                "--merged",
                "--no-merged",
                "--points-at",
            ];
            if positional == 0
                || rest
                    .iter()
                    .any(|a| READ.contains(a) || a.starts_with("--format"))
            {
                vec![]
            } else {
                vec![Kind::RefUpdate]
            }
        }
        "tag" if positional == 0 || has("-l") || has("--list") => vec![],
        "tag" => vec![Kind::RefUpdate],
        "symbolic-ref" if positional >= 2 => vec![Kind::RefUpdate],
        "config" => {
            const READ: &[&str] = &[
                "--get",
                "--get-all",
                "--get-regexp",
                "--list",
                "-l",
                "--show-origin",
            ];
            if rest.iter().any(|a| READ.contains(a)) || positional <= 1 {
                vec![Kind::ConfigInspection]
            } else {
                vec![Kind::ProfileActivation]
            }
        }
        _ => vec![],
    }
}

fn classify_gh(args: &[&str]) -> Vec<Kind> {
    let group = args.first().copied().unwrap_or("");
    let verb = args.get(1).copied().unwrap_or("");
    match (group, verb) {
        ("pr", "merge") => vec![Kind::ForgeMerge],
        ("pr", "review") => vec![Kind::ForgeReview {
            approve: args.iter().any(|a| *a == "--approve" || *a == "-a"),
        }],
        (
            "pr",
            "comment" | "edit" | "close" | "reopen" | "ready" | "create" | "lock" | "unlock",
        )
        | (
            "issue",
            "close" | "comment" | "edit" | "create" | "reopen" | "delete" | "lock" | "transfer",
        )
        | ("label", "create" | "edit" | "delete")
        | ("release", "create" | "edit" | "delete" | "upload")
        | ("run", "rerun" | "cancel")
        | ("workflow", "run") => vec![Kind::ForgeWrite],
        ("auth", "status" | "token") | ("config", "get" | "list") => vec![Kind::ConfigInspection],
        ("auth", "login" | "switch" | "setup-git" | "refresh" | "logout") | ("config", "set") => {
            vec![Kind::ProfileActivation]
        }
        ("api", _) => classify_api_call(&args[1..]),
        _ => vec![],
    }
}

fn classify_tea(args: &[&str]) -> Vec<Kind> {
    let group = args.first().copied().unwrap_or("");
    let verb = args.get(1).copied().unwrap_or("");
    match (group, verb) {
        ("pr" | "pulls" | "pull", "merge") => vec![Kind::ForgeMerge],
        ("pr" | "pulls" | "pull", "approve" | "lgtm") => vec![Kind::ForgeReview { approve: true }],
        ("pr" | "pulls" | "pull", "reject" | "review") => {
            vec![Kind::ForgeReview { approve: false }]
        }
        ("pr" | "pulls" | "pull", "close" | "reopen" | "create" | "edit")
        | ("issue" | "issues", "close" | "reopen" | "create" | "edit")
        | ("comment" | "c", _) => vec![Kind::ForgeWrite],
        ("login" | "logins", "list" | "ls" | "") | ("whoami", _) => vec![Kind::ConfigInspection],
        ("login" | "logins", "add" | "default" | "use" | "delete" | "edit") => {
            vec![Kind::ProfileActivation]
        }
        _ => vec![],
    }
}

fn classify_glab(args: &[&str]) -> Vec<Kind> {
    match (
        args.first().copied().unwrap_or(""),
        args.get(1).copied().unwrap_or(""),
    ) {
        ("mr", "merge") => vec![Kind::ForgeMerge],
        ("mr", "approve") => vec![Kind::ForgeReview { approve: true }],
        ("api", _) => classify_api_call(&args[1..]),
        ("mr" | "issue", "note" | "close" | "reopen" | "update" | "create") => {
            vec![Kind::ForgeWrite]
        }
        ("auth", "status") => vec![Kind::ConfigInspection],
        ("auth", "login") => vec![Kind::ProfileActivation],
        _ => vec![],
    }
}

/// The HTTP method an HTTP client's arguments name, upper-case, in every spelling of
/// curl, wget, httpie/xh and `gh api`: `-X PUT`, `-XPUT`, `--request PUT`,
/// `--request=PUT`, `--method PUT`, `--method=PUT`.
fn http_method(args: &[&str]) -> Option<String> {
    const FLAGS: [&str; 3] = ["-X", "--request", "--method"];
    args.iter().enumerate().find_map(|(i, a)| {
        if FLAGS.contains(a) {
            return args.get(i + 1).map(|m| m.to_uppercase());
        }
        let joined = a
            .strip_prefix("--request=")
            .or_else(|| a.strip_prefix("--method="))
            .or_else(|| a.strip_prefix("-X").filter(|m| !m.starts_with('-')));
        joined.filter(|m| !m.is_empty()).map(str::to_uppercase)
    })
}

/// An HTTP call: writes are classified by path (`/merge`, `/reviews`).
fn classify_http(args: &[&str]) -> Vec<Kind> {
    let method = http_method(args);
    let has_body = args.iter().any(|a| {
        matches!(
            *a,
            "-d" | "--data" | "--data-raw" | "--json" | "-F" | "--form"
        )
    });
    let writes = match method.as_deref() {
        Some("GET") | Some("HEAD") | Some("OPTIONS") => false,
        Some(_) => true,
        None => {
            has_body
                || args
                    .iter()
                    .any(|a| matches!(*a, "POST" | "PUT" | "PATCH" | "DELETE"))
        }
    };
    if !writes {
        return vec![];
    }
    vec![write_by_path(args)]
}

/// The operation a GraphQL call sends in its `query` field: `query { … }` (or a bare
/// `{ … }`) reads; `mutation { … }` writes (a merge, a review, or another write, by the
/// mutation's name). `None` when no query text is given inline.
fn graphql_operation(args: &[&str]) -> Option<Vec<Kind>> {
    let text = args.iter().find_map(|a| a.strip_prefix("query="))?.trim();
    if text.starts_with('{') || text.starts_with("query") {
        return Some(vec![]);
    }
    let body = text.strip_prefix("mutation")?.to_lowercase();
    Some(vec![
        if body.contains("mergepullrequest") || body.contains("mergemergerequest") {
            Kind::ForgeMerge
        } else if body.contains("pullrequestreview") {
            Kind::ForgeReview {
                approve: body.contains("approve"),
            }
        } else {
            Kind::ForgeWrite
        },
    ])
}

/// `gh api`/`glab api`: a write when a method other than GET is given or fields are
/// sent, except a GraphQL query, which reads ([`graphql_operation`]).
fn classify_api_call(args: &[&str]) -> Vec<Kind> {
    let endpoint = args
        .iter()
        .find(|a| !a.starts_with('-') && !a.contains('='));
    if endpoint == Some(&"graphql")
        && let Some(kinds) = graphql_operation(args)
    {
        return kinds;
    }
    let method = http_method(args);
    let has_fields = args
        .iter()
        .any(|a| matches!(*a, "-f" | "-F" | "--field" | "--raw-field" | "--input"));
    let writes = match method.as_deref() {
        Some("GET") => false,
        Some(_) => true,
        None => has_fields,
    };
    if writes {
        vec![write_by_path(args)]
    } else {
        vec![]
    }
}

fn write_by_path(args: &[&str]) -> Kind {
    let joined = args.join(" ");
    let approve = joined.to_uppercase().contains("APPROVE");
    if args
        .iter()
        .any(|a| a.trim_end_matches('/').ends_with("/merge"))
    {
        Kind::ForgeMerge
    } else if args
        .iter()
        .any(|a| a.contains("/reviews") || a.ends_with("/approve"))
    {
        Kind::ForgeReview { approve }
    } else {
        Kind::ForgeWrite
    }
}

const READ_VERBS: &[&str] = &[
    "get", "list", "search", "read", "view", "show", "find", "query", "describe", "check",
    "status", "diff", "download", "whoami", "compare",
];
const WRITE_VERBS: &[&str] = &[
    "create", "update", "delete", "add", "edit", "close", "reopen", "set", "remove", "write",
    "post", "comment", "label", "assign", "lock", "unlock", "dismiss", "submit", "request", "push",
    "fork", "transfer", "rerun", "cancel", "trigger", "dispatch", "upload", "approve", "merge",
    "activate", "switch",
];
const LOCAL_EDIT_TOOLS: &[&str] = &[
    "write",
    "edit",
    "multiedit",
    "notebookedit",
    "apply_patch",
    "str_replace_based_edit_tool",
    "str_replace_editor",
    "create_file",
    "write_file",
    "edit_file",
    "delete_file",
    "move_file",
    "create_directory",
];

/// Split a tool name into lower-case words (`mcp__gitea__createPullReview` →
/// `create`, `pull`, `review`), and say whether it names a forge server.
fn tool_words(name: &str) -> (Vec<String>, bool, String) {
    let base = name.rsplit("__").next().unwrap_or(name);
    let base = base.rsplit(['.', '/']).next().unwrap_or(base);
    let mut spaced = String::new();
    let mut prev_lower = false;
    for c in base.chars() {
        if c.is_uppercase() && prev_lower {
            spaced.push('_');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        spaced.push(c.to_ascii_lowercase());
    }
    let words = spaced
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    let lower = name.to_lowercase();
    let forge = FORGES.iter().any(|f| lower.contains(f));
    (words, forge, spaced)
}

/// Names that mark a tool as a forge's.
const FORGES: &[&str] = &[
    "gitea",
    "github",
    "gitlab",
    "forgejo",
    "codeberg",
    "bitbucket",
];

/// The MCP server part of `mcp__server__tool`, lower-case.
fn tool_server(name: &str) -> Option<String> {
    let mut parts = name.split("__");
    (parts.next() == Some("mcp"))
        .then(|| parts.next().map(str::to_lowercase))
        .flatten()
}

/// The file path argument of a file tool (`file_path`, `path`, ...).
pub(crate) fn tool_path(arguments: &Value) -> Option<&str> {
    [
        "file_path",
        "filePath",
        "path",
        "filename",
        "file",
        "notebook_path",
        "target",
    ]
    .iter()
    .find_map(|k| arguments.get(*k).and_then(Value::as_str))
}

/// The repository directory argument of a local git tool.
pub(crate) fn tool_repo_dir(arguments: &Value) -> Option<&str> {
    [
        "repo_path",
        "repoPath",
        "repository_path",
        "cwd",
        "directory",
        "working_dir",
        "workdir",
        "path",
    ]
    .iter()
    .find_map(|k| arguments.get(*k).and_then(Value::as_str))
}

/// Whether a tool's name has a read verb (`get_pull_request`, `pull_request_read`).
pub(crate) fn is_read_tool(name: &str) -> bool {
    let (words, _, _) = tool_words(name);
    words.iter().any(|w| READ_VERBS.contains(&w.as_str()))
}

/// Whether a tool is a local git tool (`mcp__git__git_merge`, `git_checkout`).
pub(crate) fn is_local_git_tool(name: &str) -> bool {
    let (words, forge, _) = tool_words(name);
    !forge
        && (tool_server(name).as_deref() == Some("git")
            || words.first().is_some_and(|w| w == "git"))
}

/// What a local git tool does, by its git verb (`git_merge` → a local merge).
fn classify_git_tool(words: &[String], arguments: &Value) -> Option<Kind> {
    let verbs: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .filter(|w| *w != "git")
        .collect();
    let flag = |k: &str| arguments.get(k).and_then(Value::as_bool).unwrap_or(false);
    let mode = arguments
        .get("mode")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_lowercase();
    let verb = verbs.first().copied().unwrap_or("");
    let has = |w: &str| verbs.contains(&w);
    Some(match verb {
        "merge" if has("abort") || flag("abort") => Kind::MergeRestore,
        "merge" | "pull" => Kind::LocalMerge,
        "reset" if has("hard") || mode == "hard" || flag("hard") => Kind::MergeRestore,
        "checkout" | "switch" | "reset" | "add" | "rm" | "restore" | "stash" | "clean"
        | "rebase" | "cherry" | "revert" | "apply" | "unstage" => Kind::WorktreeChange,
        "commit" | "fetch" | "tag" | "branch" | "create" | "delete" | "update" => Kind::RefUpdate,
        "worktree" if has("add") || has("remove") || has("prune") => Kind::WorktreeAddRemove,
        "push" => Kind::Push,
        _ => return None,
    })
}

/// What an MCP/agent tool call does. `None` for reads and unknown tools.
///
/// Local git tools are classified by their git verb; profile/login activation and
/// reads of configuration material are classified before the forge verbs; forge tools
/// by their verb words; local file tools as file edits.
pub(crate) fn classify_tool(name: &str, arguments: &Value) -> Option<Kind> {
    let (words, forge, base) = tool_words(name);
    let has = |w: &str| words.iter().any(|x| x == w);
    let first = words.first().map(String::as_str).unwrap_or("");
    if is_local_git_tool(name) {
        return classify_git_tool(&words, arguments);
    }
    let path_class = tool_path(arguments).and_then(config_path_class);
    const READ_TOOLS: &[&str] = &[
        "read",
        "read_file",
        "read_text_file",
        "view",
        "cat",
        "open",
        "get_file_contents",
        "read_multiple_files",
    ];
    if !forge && READ_TOOLS.contains(&base.as_str()) {
        return path_class.map(|_| Kind::ConfigInspection);
    }
    if [
        "profile",
        "login",
        "account",
        "credential",
        "credentials",
        "identity",
        "context",
    ]
    .iter()
    .any(|w| has(w))
        && [
            "activate", "switch", "use", "set", "select", "login", "default", "add",
        ]
        .iter()
        .any(|w| has(w))
        && !READ_VERBS.contains(&first)
    {
        return Some(Kind::ProfileActivation);
    }
    // "pull request" and "merge request" are nouns: neither word is a verb there.
    let noun_at = |i: usize| {
        let w = words[i].as_str();
        let next = words.get(i + 1).map(String::as_str);
        let prev = i.checked_sub(1).map(|p| words[p].as_str());
        (matches!(w, "pull" | "merge") && matches!(next, Some("request" | "requests")))
            || (matches!(w, "request" | "requests") && matches!(prev, Some("pull" | "merge")))
    };
    let verbs: Vec<&str> = (0..words.len())
        .filter(|&i| !noun_at(i))
        .map(|i| words[i].as_str())
        .collect();
    let writes = verbs.iter().any(|w| WRITE_VERBS.contains(w));
    let reads = verbs.iter().any(|w| READ_VERBS.contains(w));
    if READ_VERBS.contains(&first) || (reads && !writes) {
        return None;
    }
    let has_verb = |w: &str| verbs.contains(&w);
    if has_verb("merge")
        && !["base", "status", "check", "mergeable", "can"]
            .iter()
            .any(|w| has(w))
    {
        return Some(Kind::ForgeMerge);
    }
    if has("approve") {
        return Some(Kind::ForgeReview { approve: true });
    }
    if (has("review") || has("reviews")) && writes {
        let event = arguments
            .get("event")
            .or_else(|| arguments.get("state"))
            .and_then(Value::as_str);
        let approve = event.is_some_and(|e| {
            e.eq_ignore_ascii_case("APPROVE") || e.eq_ignore_ascii_case("APPROVED")
        });
        return Some(Kind::ForgeReview { approve });
    }
    if !forge && LOCAL_EDIT_TOOLS.contains(&base.as_str()) {
        let command = arguments.get("command").and_then(Value::as_str);
        return if command == Some("view") {
            path_class.map(|_| Kind::ConfigInspection)
        } else {
            Some(Kind::FileEdit)
        };
    }
    if writes {
        return Some(Kind::ForgeWrite);
    }
    None
}

/// Whether a replay command would approve or merge directly (shell commands, HTTP
/// calls, or tool-call notation such as `merge_pull_request(owner=..)`).
pub(crate) fn is_direct_approve_or_merge(command: &str) -> bool {
    let kinds = classify_command(command);
    if kinds.iter().any(|k| {
        matches!(
            k,
            Kind::ForgeMerge | Kind::LocalMerge | Kind::ForgeReview { approve: true }
        )
    }) {
        return true;
    }
    let head = command
        .trim()
        .split(|c: char| c == '(' || c.is_whitespace())
        .next()
        .unwrap_or("");
    let looks_like_tool = head.contains('_')
        && head
            .chars()
            .all(|c| c.is_alphanumeric() || "_-.".contains(c));
    if looks_like_tool {
        let args: Value = command
            .find('(')
            .map(|i| Value::String(command[i..].to_owned()))
            .unwrap_or(Value::Null);
        let approve_in_args = args
            .as_str()
            .is_some_and(|a| a.to_uppercase().contains("APPROVE"));
        return match classify_tool(head, &Value::Null) {
            Some(Kind::ForgeMerge) | Some(Kind::ForgeReview { approve: true }) => true,
            Some(Kind::ForgeReview { approve: false }) => approve_in_args,
            _ => false,
        };
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shell_splitting_respects_quotes_and_redirections() {
        let cmds = split_shell(
            "cd /w && git commit -m \"a; b\" | tee log.txt 2>&1 > out.txt; echo hi >/dev/null",
        );
        let words: Vec<Vec<&str>> = cmds
            .iter()
            .map(|c| c.words.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(
            words,
            vec![
                vec!["cd", "/w"],
                vec!["git", "commit", "-m", "a; b"],
                vec!["tee", "log.txt"],
                vec!["echo", "hi"]
            ]
        );
        assert_eq!(cmds[2].writes_to, ["out.txt"]);
        assert!(cmds[3].writes_to.is_empty());
    }

    /// Hostile nesting of substitutions is looked into only so deep: no stack overflow.
    #[test]
    fn deep_substitutions_are_bounded() {
        let line = "$(".repeat(100_000) + "gh pr merge 1";
        let _ = classify_command(&line);
        let line = "`$(".repeat(50_000);
        let _ = classify_command(&line);
    }

    #[test]
    fn forge_clis_by_their_effect() {
        let merge = Some(Kind::ForgeMerge);
        let write = Some(Kind::ForgeWrite);
        let approve = Some(Kind::ForgeReview { approve: true });
        let table: &[(&str, Option<Kind>)] = &[
            (
                "gh api graphql -f 'query=query { repository(owner: \"o\", name: \"r\") { issue(number: 1) { state } } }'",
                None,
            ),
            ("gh api graphql -f 'query={ viewer { login } }'", None),
            (
                "gh api graphql -f 'query=mutation { mergePullRequest(input: {pullRequestId: \"x\"}) { clientMutationId } }'",
                merge,
            ),
            (
                "gh api graphql -f 'query=mutation { addPullRequestReview(input: {event: APPROVE}) { clientMutationId } }'",
                approve,
            ),
            (
                "gh api graphql -f 'query=mutation { closeIssue(input: {issueId: \"x\"}) { clientMutationId } }'",
                write,
            ),
            ("gh api repos/o/r/pulls/4", None),
            ("gh api -X PUT repos/o/r/pulls/4/merge", merge),
            ("gh api repos/o/r/issues/4/comments -f body=hi", write),
            ("tea pulls approve 4", approve),
            ("tea pr merge 4", merge),
            ("tea comment 4 looks-good", write),
            ("tea issues close 4", write),
            ("tea pr list", None),
            ("glab mr approve 4", approve),
            ("glab mr merge 4", merge),
            ("glab mr note 4 -m hi", write),
            ("glab mr view 4", None),
            ("glab api -X PUT projects/1/merge_requests/4/merge", merge),
            ("glab api projects/1/merge_requests/4", None),
        ];
        for (cmd, expected) in table {
            let kinds = classify_command(cmd);
            assert_eq!(kinds.first().copied(), *expected, "{cmd}");
        }
    }

    #[test]
    fn test_runners_pointed_elsewhere_name_their_directory() {
        let table: &[(&str, Option<&str>)] = &[
            ("cargo test --workspace", None),
            (
                "cargo test --manifest-path /src/w/Cargo.toml",
                Some("/src/w"),
            ),
            ("cargo test --manifest-path=../w/Cargo.toml", Some("../w")),
            ("cargo test --manifest-path Cargo.toml", Some(".")),
            ("make -C /src/w test", Some("/src/w")),
            ("npm --prefix ../w test", Some("../w")),
            ("yarn --cwd=/src/w test", Some("/src/w")),
            ("go test -C /src/w ./...", Some("/src/w")),
            ("pytest -C x", None),
        ];
        for (cmd, expected) in table {
            let words: Vec<&str> = cmd.split_whitespace().collect();
            assert_eq!(runner_dir(&words).as_deref(), *expected, "{cmd}");
        }
    }

    #[test]
    fn commands_are_classified_by_program_and_subcommand() {
        use Kind::*;
        let table: &[(&str, &[Kind])] = &[
            ("git status --porcelain", &[]),
            ("git -C ../wt merge --no-ff origin/main", &[LocalMerge]),
            ("git merge --abort", &[MergeRestore]),
            ("git merge-base --is-ancestor a b", &[]),
            ("git pull --ff-only", &[LocalMerge, RefUpdate]),
            ("git worktree add ../wt abc123", &[WorktreeAddRemove]),
            ("git worktree list", &[]),
            ("git fetch origin", &[RefUpdate]),
            ("git branch --show-current", &[]),
            ("git branch -D old", &[RefUpdate]),
            ("git reset --hard abc", &[MergeRestore]),
            ("git checkout abc123", &[WorktreeChange]),
            ("git push origin HEAD", &[Push]),
            ("git config --get remote.origin.url", &[ConfigInspection]),
            ("cargo test --workspace", &[TestRun]),
            ("cd wt && npm run test:unit", &[TestRun]),
            ("python -m pytest -q", &[TestRun]),
            ("python -m unittest", &[TestRun]),
            ("python -c 'import pytest'", &[]),
            ("python script.py -m pytest", &[]),
            // Test runners started by a launcher.
            ("npx jest", &[TestRun]),
            ("npx vitest run", &[TestRun]),
            ("npx -y -p jest jest --ci", &[TestRun]),
            ("bunx vitest", &[TestRun]),
            ("uv run pytest", &[TestRun]),
            ("uv run python -m pytest", &[TestRun]),
            ("uvx pytest", &[TestRun]),
            ("poetry run pytest", &[TestRun]),
            ("pipenv run pytest", &[TestRun]),
            ("hatch run pytest", &[TestRun]),
            ("hatch test", &[TestRun]),
            ("pdm run pytest", &[TestRun]),
            ("pnpm exec jest", &[TestRun]),
            ("yarn dlx jest", &[TestRun]),
            ("npm exec -- vitest run", &[TestRun]),
            ("tox -e py312", &[TestRun]),
            ("nox -s tests", &[TestRun]),
            ("bun test", &[TestRun]),
            ("npx prettier --check .", &[]),
            ("uv run ruff check", &[]),
            ("make check", &[TestRun]),
            ("echo x > notes.md", &[FileEdit]),
            ("sed -i s/a/b/ f.rs", &[FileEdit]),
            ("sed -n 1,5p f.rs", &[]),
            ("sed -Ei 's/a/b/' f.rs", &[FileEdit]),
            ("sed -ni p f.rs", &[FileEdit]),
            ("sed -i.bak s/a/b/ f.rs", &[FileEdit]),
            ("sed --in-place s/a/b/ f.rs", &[FileEdit]),
            ("sed --in-place=.orig s/a/b/ f.rs", &[FileEdit]),
            ("sed -e s/a/b/ -i f.rs", &[FileEdit]),
            ("sed -E -n 's/i/x/p' f.rs", &[]),
            ("sed -e i f.rs", &[]),
            ("perl -pi -e 's/a/b/' f.rs", &[FileEdit]),
            ("perl -i -pe 's/a/b/' f.rs", &[FileEdit]),
            ("perl -0pi -e 's/a/b/' f.rs", &[FileEdit]),
            ("perl -pie 's/a/b/' f.rs", &[FileEdit]),
            ("perl -ne 'print if /i/' f.rs", &[]),
            ("perl -Ilib -e 'print 1'", &[]),
            // In-place edits through find, multi-call binaries, formatters and fixers.
            ("find . -name '*.rs' -exec sed -i s/a/b/ {} +", &[FileEdit]),
            ("find src -execdir sed -i s/a/b/ {} \\;", &[FileEdit]),
            ("find . -name '*.orig' -delete", &[FileEdit]),
            ("find . -name '*.rs' -exec grep -l x {} +", &[]),
            (
                "find . -exec find {} -exec sed -i s/a/b/ {} + ;",
                &[FileEdit],
            ),
            ("busybox sed -i s/a/b/ f.rs", &[FileEdit]),
            ("toybox sed -i s/a/b/ f.rs", &[FileEdit]),
            ("busybox sed -n p f.rs", &[]),
            ("cargo fmt", &[FileEdit]),
            ("cargo +nightly fmt --all", &[FileEdit]),
            ("cargo fmt --all -- --check", &[]),
            ("cargo fmt --check", &[]),
            ("cargo fix --allow-dirty", &[FileEdit]),
            ("cargo clippy --fix --allow-dirty", &[FileEdit]),
            ("cargo clippy --all-targets -- -D warnings", &[]),
            ("rustfmt src/lib.rs", &[FileEdit]),
            ("rustfmt --check src/lib.rs", &[]),
            ("gofmt -w .", &[FileEdit]),
            ("gofmt -l .", &[]),
            ("go fmt ./...", &[FileEdit]),
            ("go vet ./...", &[]),
            ("cat ~/.config/gh/hosts.yml", &[ConfigInspection]),
            ("tea login list", &[ConfigInspection]),
            ("gh auth switch --user bot", &[ProfileActivation]),
            ("export GITEA_TOKEN=abc", &[ProfileActivation]),
            ("GH_TOKEN=x gh pr view 4", &[]),
            ("gh pr merge 4 --squash", &[ForgeMerge]),
            ("gh pr review 4 --approve", &[ForgeReview { approve: true }]),
            (
                "gh pr review 4 --comment -b hi",
                &[ForgeReview { approve: false }],
            ),
            ("gh api repos/o/r/pulls/4/merge -X PUT", &[ForgeMerge]),
            ("gh api repos/o/r/pulls/4", &[]),
            (
                "curl -X POST https://git.example/api/v1/repos/o/r/pulls/4/reviews -d '{\"event\":\"APPROVED\"}'",
                &[ForgeReview { approve: true }],
            ),
            ("tea pr merge 4", &[ForgeMerge]),
            ("bash -c 'git merge x'", &[LocalMerge]),
            // Every spelling of an HTTP method, for gh api and plain HTTP clients alike.
            ("gh api -XPUT repos/o/r/pulls/4/merge", &[ForgeMerge]),
            ("gh api --method=PUT repos/o/r/pulls/4/merge", &[ForgeMerge]),
            ("gh api --method GET repos/o/r/pulls/4/merge", &[]),
            (
                "wget --method=PUT https://api.github.com/repos/o/r/pulls/1/merge",
                &[ForgeMerge],
            ),
            (
                "curl --request=PUT https://git.example/api/v1/repos/o/r/pulls/4/merge",
                &[ForgeMerge],
            ),
            (
                "curl -XGET https://git.example/api/v1/repos/o/r/pulls/4/merge",
                &[],
            ),
            // `eval` runs its words as a command line.
            ("eval 'gh pr merge 42'", &[ForgeMerge]),
            ("eval git merge feature", &[LocalMerge]),
            ("eval 'git push origin main'", &[Push]),
            ("eval 'git status'", &[]),
            ("gh release create v1", &[ForgeWrite]),
            ("gh release list", &[]),
            // Wrappers with their own options, compound commands, substitutions.
            ("nice -n 5 git push", &[Push]),
            ("sudo -u bob git push origin main", &[Push]),
            ("env -i PATH=/bin git push", &[Push]),
            ("env -u X gh pr merge 42", &[ForgeMerge]),
            ("xargs -0 gh pr merge", &[ForgeMerge]),
            ("timeout 30 git push", &[Push]),
            ("timeout -s KILL 30s gh pr merge 4", &[ForgeMerge]),
            ("stdbuf -oL git push", &[Push]),
            ("setsid git push", &[Push]),
            ("if true; then git push origin main; fi", &[Push]),
            ("for i in 1; do gh pr merge 42; done", &[ForgeMerge]),
            ("echo `gh pr merge 42`", &[ForgeMerge]),
            ("x=$(gh pr merge 42)", &[ForgeMerge]),
            (
                "glab api -X PUT projects/1/merge_requests/3/merge",
                &[ForgeMerge],
            ),
            ("glab api projects/1/merge_requests/3", &[]),
            ("timeout 30 git status", &[]),
            ("echo $($($(gh pr merge 42)))", &[ForgeMerge]),
        ];
        for (cmd, expected) in table {
            assert_eq!(classify_command(cmd), *expected, "{cmd}");
        }
    }

    #[test]
    fn tools_are_classified_by_name_words() {
        use Kind::*;
        let table: &[(&str, serde_json::Value, Option<Kind>)] = &[
            ("mcp__gitea__get_pull_request", json!({}), None),
            ("mcp__gitea__list_pull_reviews", json!({}), None),
            ("merge_pull_request", json!({}), Some(ForgeMerge)),
            (
                "mcp__gitea__create_pull_review",
                json!({"event": "APPROVED"}),
                Some(ForgeReview { approve: true }),
            ),
            (
                "mcp__github__createPullRequestReview",
                json!({"event": "COMMENT"}),
                Some(ForgeReview { approve: false }),
            ),
            (
                "mcp__gitea__create_issue_comment",
                json!({}),
                Some(ForgeWrite),
            ),
            ("Write", json!({"file_path": "x"}), Some(FileEdit)),
            (
                "str_replace_based_edit_tool",
                json!({"command": "view"}),
                None,
            ),
            ("mcp__github__get_mergeable_state", json!({}), None),
            ("mcp__github__pull_request_read", json!({}), None),
            (
                "mcp__gitlab__create_merge_request",
                json!({}),
                Some(ForgeWrite),
            ),
            (
                "mcp__github__pull_request_review_write",
                json!({"event": "APPROVE"}),
                Some(ForgeReview { approve: true }),
            ),
            ("gitea_activate_profile", json!({}), Some(ProfileActivation)),
            (
                "mcp__gitea__activate_profile",
                json!({}),
                Some(ProfileActivation),
            ),
            (
                "mcp__forge__switch_account",
                json!({}),
                Some(ProfileActivation),
            ),
            ("mcp__gitea__get_profile", json!({}), None),
            ("mcp__git__git_merge", json!({}), Some(LocalMerge)),
            ("mcp__git__git_checkout", json!({}), Some(WorktreeChange)),
            ("mcp__git__git_commit", json!({}), Some(RefUpdate)),
            (
                "mcp__git__git_reset",
                json!({"mode": "hard"}),
                Some(MergeRestore),
            ),
            ("mcp__git__git_status", json!({}), None),
            ("git_log", json!({}), None),
            (
                "mcp__filesystem__write_file",
                json!({"path": "/w/a"}),
                Some(FileEdit),
            ),
            ("mcp__gitea__close_issue", json!({}), Some(ForgeWrite)),
            (
                "Read",
                json!({"file_path": "/root/.config/gh/hosts.yml"}),
                Some(ConfigInspection),
            ),
            ("Read", json!({"file_path": "/src/w/src/main.rs"}), None),
        ];
        for (name, args, expected) in table {
            assert_eq!(classify_tool(name, args), *expected, "{name}");
        }
    }

    #[test]
    fn configuration_paths_are_classified_by_shape() {
        let table: &[(&str, Option<&str>)] = &[
            ("~/.netrc", Some("credentials")),
            ("/home/ci/.git-credentials", Some("credentials")),
            ("./deploy/gitea_token.txt", Some("credentials")),
            ("src/token.rs", None),
            (
                "~/.config/tea/config.yml",
                Some("forge-client configuration"),
            ),
            ("hosts.yml", Some("forge-client configuration")),
            ("/root/.claude/settings.json", Some("agent configuration")),
            (".mcp.json", Some("agent configuration")),
            ("~/.gitconfig", Some("git configuration")),
            (".git/config", Some("git configuration")),
            (".env.local", Some("environment file")),
            ("~/.npmrc", Some("package-registry configuration")),
            ("~/.bash_profile", Some("profile")),
            ("~/.config/some-tool/x.toml", Some("home configuration")),
            ("/root/.cache/thing", Some("home configuration")),
            (".github/workflows/ci.yml", None),
            ("README.md", None),
            ("token", None),
        ];
        for (path, class) in table {
            assert_eq!(config_path_class(path), *class, "{path}");
        }
        assert_eq!(classify_command("grep -rn token src/"), []);
        assert_eq!(
            classify_command("cat ~/.config/gh/hosts.yml"),
            [Kind::ConfigInspection]
        );
    }

    #[test]
    fn direct_approve_or_merge_replays_are_recognised() {
        let yes = [
            "gh pr merge 42 --squash",
            "gh pr review 42 --approve",
            "tea pulls approve 42",
            "git merge --ff-only origin/feature",
            "merge_pull_request(owner=\"acme\", repo=\"widgets\", index=42)",
            "mcp__gitea__create_pull_review(event=APPROVED)",
        ];
        let no = [
            "vouch validate-report final-report.md",
            "gh pr view 42",
            "git merge --abort",
            "vouch review --base main --head merge",
            "mcp__gitea__get_pull_request(index=42)",
        ];
        for c in yes {
            assert!(is_direct_approve_or_merge(c), "{c}");
        }
        for c in no {
            assert!(!is_direct_approve_or_merge(c), "{c}");
        }
    }
}
