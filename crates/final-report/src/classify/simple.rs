//! Classifying one simple command by its program: file edits, config reads,
//! profile activations, and the dispatch to git, forge CLIs, HTTP clients and runners.

use super::*;

pub(super) const PROFILE_VARS: &[&str] = &[
    "TOKEN", "PROFILE", "GH_HOST", "GITEA", "FORGEJO", "GITHUB", "GITLAB", "TEA_",
];

/// What one simple command does: its redirects, profile assignments and the kinds of
/// the program it runs after any wrappers.
pub(crate) fn classify_simple(simple: &SimpleCommand) -> Vec<Kind> {
    let mut kinds = Vec::new();
    if !simple.writes_to.is_empty() {
        kinds.push(Kind::FileEdit);
    }
    let words: &[String] = &simple.words;
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
    let Some(words) = unwrap_command(words, &mut kinds) else {
        return kinds;
    };
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
    program_kinds(&program, &args, &mut kinds);
    if is_test_run(&program, &args) {
        kinds.push(Kind::TestRun);
    }
    if is_config_read(&program, &args) {
        kinds.push(Kind::ConfigInspection);
    }
    kinds
}

/// The words of the command proper, after wrappers (`env`, `sudo`, ...), shell keywords
/// and per-command assignments; `None` when `eval` ran them as a command line of its own,
/// whose kinds are then in `kinds`.
fn unwrap_command<'a>(mut words: &'a [String], kinds: &mut Vec<Kind>) -> Option<&'a [String]> {
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
                return None;
            }
            _ => break,
        }
    }
    Some(words)
}

/// The kinds a program's own name and arguments make it: git, forge and HTTP clients,
/// nested shells, sourced profiles, file editors and source rewriters.
fn program_kinds(program: &str, args: &[&str], kinds: &mut Vec<Kind>) {
    match program {
        "git" => kinds.extend(classify_git(args)),
        "gh" => kinds.extend(classify_gh(args)),
        "tea" => kinds.extend(classify_tea(args)),
        "glab" => kinds.extend(classify_glab(args)),
        "curl" | "wget" | "http" | "https" | "xh" => kinds.extend(classify_http(args)),
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
        "sed" | "perl" if edits_in_place(program, args) => kinds.push(Kind::FileEdit),
        "dd" if args.iter().any(|a| a.starts_with("of=")) => kinds.push(Kind::FileEdit),
        "find" => kinds.extend(find_actions(args)),
        "cargo" | "rustfmt" | "gofmt" | "go" if rewrites_sources(program, args) => {
            kinds.push(Kind::FileEdit)
        }
        _ => {}
    }
}

/// What `find` does to the files it finds: `-delete` removes them, and each
/// `-exec`/`-execdir`/`-ok`/`-okdir COMMAND … ;|+` runs a command (classified like any
/// other; a nested `find`'s own actions are found by the same scan).
pub(super) fn find_actions(args: &[&str]) -> Vec<Kind> {
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
pub(super) fn rewrites_sources(program: &str, args: &[&str]) -> bool {
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
    if !path_like && !matches!(name, "hosts.yml" | "mcp.json" | "auth.json" | "credentials") {
        return None;
    }
    if is_credential_path(&parts, name) {
        return Some("credentials");
    }
    if let Some(class) = client_config_class(&lower, &parts, name) {
        return Some(class);
    }
    let home = lower.starts_with("~/")
        || lower.starts_with("$home/")
        || lower.starts_with("${home}/")
        || lower.starts_with("/root/")
        || (parts.first() == Some(&"home") && lower.starts_with('/'));
    if parts.contains(&".config") || (home && parts.iter().skip(1).any(|p| p.starts_with('.'))) {
        return Some("home configuration");
    }
    None
}

/// Whether a path (its lowercased `parts`, last one `name`) holds credentials: a
/// credential directory or file, a key, or a non-source name with token/secret/credential.
fn is_credential_path(parts: &[&str], name: &str) -> bool {
    const SOURCE: &[&str] = &[
        ".rs", ".py", ".go", ".ts", ".js", ".java", ".c", ".h", ".md", ".kt", ".rb", ".snap",
    ];
    let named_secret = ["token", "secret", "credential"]
        .iter()
        .any(|w| name.contains(w))
        && !SOURCE.iter().any(|x| name.ends_with(x));
    [
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
    .any(|c| parts.contains(c))
        || named_secret
        || name == "auth.json"
        || name.starts_with("id_rsa")
        || name.starts_with("id_ed25519")
        || [".pem", ".key", ".p12", ".pfx"]
            .iter()
            .any(|x| name.ends_with(x))
}

/// The class of a tool's own configuration path: forge client, agent, git, environment
/// file, package registry or profile.
fn client_config_class(lower: &str, parts: &[&str], name: &str) -> Option<&'static str> {
    let has = |c: &str| parts.contains(&c);
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
    None
}

pub(super) fn is_config_read(program: &str, args: &[&str]) -> bool {
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
pub(super) fn edits_in_place(program: &str, args: &[&str]) -> bool {
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
