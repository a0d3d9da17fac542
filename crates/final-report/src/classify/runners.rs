//! Test runners and the launchers that start them (`npx`, `uv run`, `python -m`),
//! and the directory a runner is pointed at.

use super::table::{ALWAYS, Cond, Does, Row, lookup, row};

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

/// Launchers: the words a launching command starts with (the program, then the
/// subcommand that launches, if any). The launched program follows the launcher's own
/// options.
const LAUNCHERS: &[&[&[&str]]] = &[
    &[&["npx", "bunx", "pnpx", "uvx"]],
    &[
        &[
            "uv", "poetry", "pipenv", "hatch", "pdm", "rye", "pixi", "conda", "pipx",
        ],
        &["run"],
    ],
    &[&["npm", "pnpm", "yarn"], &["exec"]],
    &[&["pnpm", "yarn"], &["dlx"]],
    &[&["bun"], &["x"]],
];

/// The launcher's options that take a value (`npx -p pkg`, `uv run --with x`, `conda
/// run -n env`); other options stand alone; `--` ends them.
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

/// The program a launcher runs and its arguments, after the launcher's own options:
/// `npx`/`bunx`/`pnpx`/`uvx PROGRAM`, `uv`/`poetry`/`pipenv`/`hatch`/`pdm`/`rye`/
/// `pixi`/`conda run PROGRAM`, `pipx run`, `npm`/`pnpm`/`yarn exec`, `pnpm`/`yarn
/// dlx`, `bun x` (one row each of [`LAUNCHERS`]), and a Python interpreter's `-m
/// MODULE` (the module is the program: `python -m pytest -m fast` runs pytest with
/// `-m fast`). `None` for anything else.
pub(super) fn launched<'a, 'w>(
    program: &str,
    args: &'a [&'w str],
) -> Option<(&'w str, &'a [&'w str])> {
    if is_python(program) {
        return python_module(args);
    }
    let words = LAUNCHERS.iter().find(|words| {
        words[0].contains(&program)
            && words[1..]
                .iter()
                .enumerate()
                .all(|(i, alternatives)| args.get(i).is_some_and(|a| alternatives.contains(a)))
    })?;
    let rest = &args[words.len() - 1..];
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

pub(super) fn is_python(program: &str) -> bool {
    matches!(program, "python" | "python3" | "py" | "pypy" | "pypy3")
        || program
            .strip_prefix("python3.")
            .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()))
}

/// A Python interpreter's `-m MODULE` (or `-mMODULE`) and the module's arguments: the
/// interpreter's options before it (`-u`, `-X dev`, `-W error`) are its own, and a
/// script or `-c` ends them.
pub(super) fn python_module<'a, 'w>(args: &'a [&'w str]) -> Option<(&'w str, &'a [&'w str])> {
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

/// Whether a command runs tests: a row of [`TEST_RUNNERS`] fits its runner (looked up
/// through launchers) and that runner's arguments.
pub(crate) fn is_test_run(program: &str, args: &[&str]) -> bool {
    let (program, args) = runner(program, args);
    let words: Vec<&str> = std::iter::once(program)
        .chain(args.iter().copied())
        .collect();
    lookup(TEST_RUNNERS, &words).is_some()
}

/// `npm run test…`: a package script whose name starts with `test`.
fn runs_test_script(args: &[&str]) -> bool {
    args.first() == Some(&"run") && args.get(1).is_some_and(|s| s.starts_with("test"))
}

/// `bundle exec rspec`, `bundle exec rake`.
fn bundles_tests(args: &[&str]) -> bool {
    args.contains(&"rspec") || args.windows(2).any(|w| w == ["exec", "rake"])
}

/// What a test-runner row fits; its effect is built from the command
/// (see `classify_simple`), so the rows only decide.
const RUNS: Does = Does::Fixed(&[]);

/// Test runners: the runner, a condition on its arguments. A row that fits makes the
/// command a test run.
pub(crate) const TEST_RUNNERS: &[Row] = &[
    row(
        &[&[
            "pytest",
            "py.test",
            "tox",
            "nox",
            "jest",
            "vitest",
            "mocha",
            "rspec",
            "phpunit",
            "ctest",
            "cargo-nextest",
            "unittest",
        ]],
        ALWAYS,
        RUNS,
    ),
    row(
        &[&["cargo"]],
        &[Cond::First(&["test", "nextest", "t"])],
        RUNS,
    ),
    row(
        &[&["go", "dotnet", "mix", "swift", "deno", "bun", "hatch"]],
        &[Cond::First(&["test"])],
        RUNS,
    ),
    row(
        &[&["npm", "pnpm", "yarn"]],
        &[Cond::First(&["test", "t"]), Cond::Holds(runs_test_script)],
        RUNS,
    ),
    row(
        &[&["make", "just", "ninja"]],
        &[Cond::Word(&["test", "check", "tests"])],
        RUNS,
    ),
    row(
        &[&["mvn", "gradle", "gradlew", "./gradlew"]],
        &[Cond::Word(&["test", "verify", "check"])],
        RUNS,
    ),
    row(&[&["bundle"]], &[Cond::Holds(bundles_tests)], RUNS),
];
