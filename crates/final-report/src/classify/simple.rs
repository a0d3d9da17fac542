//! Classifying one simple command by its program: file edits, config reads,
//! profile activations, and the dispatch to git, forge CLIs, HTTP clients and runners.

use super::table::{ALWAYS, Cond, Does, NOTHING, Row, lookup, row};
use super::*;
use crate::test_scope::test_scope;

pub(super) const PROFILE_VARS: &[&str] = &[
    "TOKEN", "PROFILE", "GH_HOST", "GITEA", "FORGEJO", "GITHUB", "GITLAB", "TEA_",
];

/// What one simple command does: its redirects, profile assignments and the effects
/// of the program it runs after any wrappers.
pub(crate) fn classify_simple(simple: &SimpleCommand) -> Vec<Effect> {
    classify_simple_in(simple, &[])
}

/// [`classify_simple`] for a session whose exported variables are `env` (they may
/// filter a test run: `PYTEST_ADDOPTS`).
pub(crate) fn classify_simple_in(simple: &SimpleCommand, env: &[(String, String)]) -> Vec<Effect> {
    class_config_reads(effects_of(simple, env), &simple.words)
}

/// The effects of a simple command, its configuration reads not yet classed.
fn effects_of(simple: &SimpleCommand, env: &[(String, String)]) -> Vec<Effect> {
    let mut effects = Vec::new();
    if !simple.writes_to.is_empty() {
        effects.push(Effect::Edit(simple.writes_to.clone()));
    }
    let words: &[String] = &simple.words;
    if words.first().is_some_and(|w| w == "export") || words.iter().all(|w| is_assignment(w)) {
        if assigns_profile(words) {
            effects.push(Effect::ProfileActivation);
        }
        return effects;
    }
    let Some(words) = unwrap_command(words, env, &mut effects) else {
        return effects;
    };
    let Some(first) = words.first() else {
        return effects;
    };
    let program = first.rsplit('/').next().unwrap_or(first).to_owned();
    let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    if names_profile_switch(words) {
        add_effect(&mut effects, Effect::ProfileActivation);
    }
    let mut argv = vec![program.as_str()];
    argv.extend(&args);
    for effect in lookup(PROGRAMS, &argv).unwrap_or_default() {
        add_effect(&mut effects, effect);
    }
    if is_test_run(&program, &args) {
        let all: Vec<&str> = simple.words.iter().map(String::as_str).collect();
        add_effect(&mut effects, test_run(&all, &argv, env));
    }
    if is_config_read(&program, &args) {
        add_effect(&mut effects, Effect::CONFIG_QUERY);
    }
    effects
}

/// A command's configuration reads, classed by the first configuration path among its
/// words (a query when it names none), each once.
fn class_config_reads(effects: Vec<Effect>, words: &[String]) -> Vec<Effect> {
    let class = words
        .iter()
        .find_map(|w| config_path_class(w))
        .unwrap_or(ConfigClass::Query);
    let mut out = Vec::new();
    for effect in effects {
        match effect {
            Effect::ConfigRead(_) => add_effect(&mut out, Effect::ConfigRead(class)),
            other => out.push(other),
        }
    }
    out
}

/// A standalone assignment or `export` of a profile/credential variable activates it.
fn assigns_profile(words: &[String]) -> bool {
    words.iter().any(|a| {
        is_assignment(a)
            && PROFILE_VARS
                .iter()
                .any(|v| a.split('=').next().unwrap_or("").contains(v))
    })
}

/// A command of any program whose words say to switch profiles (`profile use x`).
fn names_profile_switch(words: &[String]) -> bool {
    let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    lower.iter().any(|w| w == "profile")
        && lower
            .iter()
            .any(|w| matches!(w.as_str(), "activate" | "use" | "switch" | "select" | "set"))
}

/// The test run of a simple command (`words`, assignments and wrappers included) whose
/// program and arguments are `argv`: its runner, what it covers and where it is pointed.
fn test_run(words: &[&str], argv: &[&str], env: &[(String, String)]) -> Effect {
    Effect::TestRun {
        runner: runner(argv[0], &argv[1..]).0.to_owned(),
        scope: test_scope(words, env).unwrap_or(Scope::Whole),
        dir: runner_dir(argv),
    }
}

/// The words of the command proper, after wrappers (`env`, `sudo`, ...), shell keywords
/// and per-command assignments; `None` when `eval` ran them as a command line of its own,
/// whose effects are then in `effects`.
fn unwrap_command<'a>(
    mut words: &'a [String],
    env: &[(String, String)],
    effects: &mut Vec<Effect>,
) -> Option<&'a [String]> {
    loop {
        match words.first().map(String::as_str) {
            Some(w) if is_assignment(w) => words = &words[1..],
            Some(w) if SHELL_KEYWORDS.contains(&w) => words = &words[1..],
            Some("env") => {
                words = after_wrapper("env", &words[1..]);
                if words.is_empty() {
                    effects.push(Effect::CONFIG_QUERY);
                }
            }
            Some(w) if WRAPPERS.iter().any(|(name, _)| *name == w) => {
                words = after_wrapper(w, &words[1..])
            }
            // `eval` runs its words, joined, as a command line of its own.
            Some("eval") => {
                for effect in classify_line(&words[1..].join(" "), env) {
                    add_effect(effects, effect);
                }
                return None;
            }
            _ => break,
        }
    }
    Some(words)
}

/// Programs by what they do: git, forge and HTTP clients, nested shells, sourced
/// profiles, file editors and source rewriters. A program no row names only reads
/// (as far as its name says: test runs and configuration reads are found apart).
pub(crate) const PROGRAMS: &[Row] = &[
    row(&[&["git"]], ALWAYS, Does::By(classify_git)),
    row(&[&["jj"]], ALWAYS, Does::By(classify_jj)),
    row(&[&["gh"]], ALWAYS, Does::By(|a| by_table(GH, a))),
    row(&[&["tea"]], ALWAYS, Does::By(|a| by_table(TEA, a))),
    row(&[&["glab"]], ALWAYS, Does::By(|a| by_table(GLAB, a))),
    row(
        &[&["curl", "wget", "http", "https", "xh"]],
        ALWAYS,
        Does::By(classify_http),
    ),
    row(&[&["bash", "sh", "zsh"]], ALWAYS, Does::By(shell_script)),
    row(
        &[&["source", "."]],
        &[Cond::Holds(names_profile_file)],
        Does::Fixed(&[Effect::ProfileActivation]),
    ),
    row(
        &[&["printenv"]],
        ALWAYS,
        Does::Fixed(&[Effect::CONFIG_QUERY]),
    ),
    row(&[&["tee"]], &[Cond::OnlyOptions], NOTHING),
    row(&[&["cp", "install", "ln"]], ALWAYS, Does::EditsLastOperand),
    row(
        &[&[
            "touch", "tee", "mv", "rm", "rmdir", "mkdir", "chmod", "chown", "truncate", "patch",
        ]],
        ALWAYS,
        Does::EditsOperands,
    ),
    row(
        &[&["sed"]],
        &[Cond::Holds(|a| edits_in_place("sed", a))],
        Does::By(script_files),
    ),
    row(
        &[&["perl"]],
        &[Cond::Holds(|a| edits_in_place("perl", a))],
        Does::By(script_files),
    ),
    row(&[&["dd"]], &[Cond::WordPrefix("of=")], Does::EditsOperands),
    row(&[&["find"]], ALWAYS, Does::By(find_actions)),
    row(
        &[&["cargo"]],
        &[Cond::Holds(cargo_rewrites_sources)],
        Does::Edits,
    ),
    row(
        &[&["rustfmt"]],
        &[Cond::Holds(|a| {
            !a.contains(&"--check") && !a.iter().any(|a| a.starts_with("--emit"))
        })],
        Does::EditsOperands,
    ),
    row(
        &[&["gofmt"]],
        &[Cond::Holds(|a| {
            a.iter().any(|a| *a == "-w" || a.starts_with("-w="))
        })],
        Does::EditsOperands,
    ),
    row(&[&["go"]], &[Cond::First(&["fmt"])], Does::Edits),
];

/// The effects of a forge CLI's arguments by its table.
fn by_table(table: &[Row], args: &[&str]) -> Vec<Effect> {
    lookup(table, args).unwrap_or_default()
}

/// `bash -c SCRIPT` (or `-lc`): the script is a command line of its own.
fn shell_script(args: &[&str]) -> Vec<Effect> {
    args.iter()
        .position(|a| *a == "-c" || *a == "-lc")
        .and_then(|pos| args.get(pos + 1))
        .map(|script| classify_command(script))
        .unwrap_or_default()
}

/// `source FILE` / `. FILE` of a profile, environment or rc file.
fn names_profile_file(args: &[&str]) -> bool {
    args.iter()
        .any(|a| a.contains("profile") || a.contains("env") || a.contains("rc"))
}

/// What `find` does to the files it finds: `-delete` removes them, and each
/// `-exec`/`-execdir`/`-ok`/`-okdir COMMAND … ;|+` runs a command (classified like any
/// other; a nested `find`'s own actions are found by the same scan). An edit names
/// `find`'s starting points and the paths its commands name.
pub(super) fn find_actions(args: &[&str]) -> Vec<Effect> {
    let mut effects = Vec::new();
    if args.contains(&"-delete") {
        effects.push(Effect::EDIT);
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
        for effect in classify_simple(&SimpleCommand {
            words,
            writes_to: Vec::new(),
        }) {
            add_effect(&mut effects, effect);
        }
    }
    let starts = args
        .iter()
        .take_while(|a| !a.starts_with(['-', '(', '!']))
        .map(|a| (*a).to_owned())
        .collect();
    if let Some(Effect::Edit(paths)) = effects.iter_mut().find(|e| e.is_edit()) {
        let named = std::mem::replace(paths, starts);
        for p in named {
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
    }
    effects
}

/// The files `sed -i`/`perl -pi` edit: their operands but the script (the value of
/// `-e`/`-f` or of a cluster ending in `e`, else the first operand).
fn script_files(args: &[&str]) -> Vec<Effect> {
    let mut files = Vec::new();
    let mut script_given = false;
    let mut args = args.iter();
    while let Some(a) = args.next() {
        let short = a.starts_with('-') && !a.starts_with("--");
        if matches!(*a, "-f" | "--expression" | "--file") || (short && a.ends_with('e')) {
            script_given = true;
            args.next();
        } else if a.starts_with("-e") || a.starts_with("--expression=") {
            script_given = true;
        } else if !a.starts_with('-') {
            files.push((*a).to_owned());
        }
    }
    if !script_given && !files.is_empty() {
        files.remove(0);
    }
    vec![Effect::Edit(files)]
}

/// Whether `cargo` rewrites source files: `cargo fmt` without `--check`, `cargo fix`,
/// `cargo clippy --fix` (a toolchain, `cargo +nightly fmt`, comes before the
/// subcommand).
fn cargo_rewrites_sources(args: &[&str]) -> bool {
    let has = |flag: &str| args.contains(&flag);
    match args.iter().find(|a| !a.starts_with('+')).copied() {
        Some("fmt") => !has("--check"),
        Some("fix") => true,
        Some("clippy") => has("--fix"),
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
pub(crate) fn config_path_class(arg: &str) -> Option<ConfigClass> {
    let lower = arg.trim_matches(|c| c == '"' || c == '\'').to_lowercase();
    let path_like = lower.contains('/') || lower.starts_with('.') || lower.starts_with('~');
    let parts: Vec<&str> = lower.split('/').filter(|p| !p.is_empty()).collect();
    let name = parts.last().copied().unwrap_or("");
    if !path_like && !matches!(name, "hosts.yml" | "mcp.json" | "auth.json" | "credentials") {
        return None;
    }
    if is_credential_path(&parts, name) {
        return Some(ConfigClass::Credentials);
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
        return Some(ConfigClass::Home);
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
fn client_config_class(lower: &str, parts: &[&str], name: &str) -> Option<ConfigClass> {
    let has = |c: &str| parts.contains(&c);
    let after_config = parts.windows(2).find(|w| w[0] == ".config").map(|w| w[1]);
    if matches!(
        after_config,
        Some("gh" | "tea" | "glab" | "gitea" | "forgejo" | "hub" | "glab-cli" | "codeberg")
    ) || name == "hosts.yml"
    {
        return Some(ConfigClass::ForgeClient);
    }
    if [".claude", ".codex", ".cursor", ".gemini"]
        .iter()
        .any(|c| has(c))
        || name == "mcp.json"
        || name == ".mcp.json"
    {
        return Some(ConfigClass::Agent);
    }
    if name == ".gitconfig" || after_config == Some("git") || lower.ends_with(".git/config") {
        return Some(ConfigClass::Git);
    }
    if name == ".env" || name.starts_with(".env.") || name == ".envrc" {
        return Some(ConfigClass::EnvironmentFile);
    }
    if matches!(name, ".npmrc" | ".pypirc" | ".yarnrc" | ".pip")
        || lower.ends_with(".cargo/credentials.toml")
    {
        return Some(ConfigClass::PackageRegistry);
    }
    if name.contains("profile") {
        return Some(ConfigClass::Profile);
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
