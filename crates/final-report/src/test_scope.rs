//! What a test run covers: the whole suite, one package of a workspace, or a subset
//! selected by a name filter — given on the command line, through the environment
//! (`PYTEST_ADDOPTS`), or passed on by a wrapper (`tox … -- -k x`). One table per
//! runner names the options that select a subset; a full-suite claim needs a run whose
//! scope is [`Scope::Whole`] (or a package run in a directory that is not a workspace).

use crate::classify::{FilterSource, Scope, TestFilter, is_test_run, runner};

/// The options of one runner that select a subset by name.
struct RunnerFilters {
    runners: &'static [&'static str],
    options: &'static [&'static str],
}

/// Name filters by runner. `-m` of pytest is its marker filter (an interpreter's `-m`
/// names the module and is not the runner's: see [`runner`]).
const FILTERS: &[RunnerFilters] = &[
    RunnerFilters {
        runners: &["pytest", "py.test"],
        options: &["-k", "-m", "--deselect", "--lf", "--last-failed"],
    },
    RunnerFilters {
        runners: &["unittest"],
        options: &["-k"],
    },
    RunnerFilters {
        runners: &["go"],
        options: &["-run", "--run", "-skip", "--skip"],
    },
    RunnerFilters {
        runners: &["jest", "vitest", "npm", "pnpm", "yarn", "bun"],
        options: &["-t", "--testNamePattern", "--test-name-pattern"],
    },
    RunnerFilters {
        runners: &["cargo-nextest"],
        options: &["-E", "--filter-expr", "--filterset", "--skip", "--exact"],
    },
];

/// Environment variables that add arguments to a runner.
const ENV_ARGS: &[(&str, &str)] = &[("PYTEST_ADDOPTS", "pytest")];

/// The first of `options` among `args` (`-k`, `-k=x`, or `-kx` for one-letter ones).
fn named(args: &[&str], options: &[&str]) -> Option<String> {
    args.iter().find_map(|a| {
        options
            .iter()
            .find(|f| {
                *a == **f
                    || a.starts_with(&format!("{f}="))
                    || (f.len() == 2 && !f.starts_with("--") && a.starts_with(**f) && a.len() > 2)
            })
            .map(|f| (*f).to_owned())
    })
}

fn table_filter(runner: &str, args: &[&str]) -> Option<String> {
    FILTERS
        .iter()
        .find(|t| t.runners.contains(&runner))
        .and_then(|t| named(args, t.options))
}

/// The scope of the test run in `words` (a simple command, assignments included),
/// given the session's exported variables `env`. `None` when it runs no tests.
pub(crate) fn test_scope(words: &[&str], env: &[(String, String)]) -> Option<Scope> {
    let at = (0..words.len()).find(|i| {
        let program = words[*i].rsplit('/').next().unwrap_or_default();
        is_test_run(program, &words[i + 1..])
    })?;
    let (program, args) = runner(words[at], &words[at + 1..]);
    let inline = words[..at]
        .iter()
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()));
    let env: Vec<(String, String)> = env.iter().cloned().chain(inline).collect();
    let scope = match program {
        "cargo" => cargo_scope(args),
        "tox" | "nox" => posargs_scope(args),
        _ => table_filter(program, args).map(|f| Scope::Filtered(TestFilter::argument(&f))),
    };
    Some(
        scope
            .or_else(|| env_filter(program, &env).map(Scope::Filtered))
            .unwrap_or(Scope::Whole),
    )
}

/// A filter an environment variable passes to `program`.
fn env_filter(program: &str, env: &[(String, String)]) -> Option<TestFilter> {
    let inner = if matches!(program, "tox" | "nox") {
        "pytest"
    } else {
        program
    };
    ENV_ARGS
        .iter()
        .filter(|(_, runner)| *runner == inner || (inner == "py.test" && *runner == "pytest"))
        .find_map(|(var, runner)| {
            let (_, value) = env.iter().rev().find(|(k, _)| k == var)?;
            let words: Vec<&str> = value.split_whitespace().collect();
            table_filter(runner, &words).map(|option| TestFilter {
                option,
                source: FilterSource::Environment((*var).to_owned()),
            })
        })
}

/// Whether a command shows its directory is a cargo workspace: `--workspace`, `--all`
/// or `--exclude` given to cargo, or recorded output with a `[workspace]` table.
pub(crate) fn shows_workspace(words: &[&str], output: Option<&str>) -> bool {
    let cargo = words
        .first()
        .is_some_and(|w| w.rsplit('/').next() == Some("cargo"));
    let flag = |a: &&str| matches!(*a, "--workspace" | "--all" | "--exclude");
    (cargo && words.iter().take_while(|a| **a != "--").any(flag))
        || output.is_some_and(|o| o.lines().any(|l| l.trim() == "[workspace]"))
}

/// The assignments of an `export` or assignment-only command (`export A=1 B=2`).
pub(crate) fn exported(words: &[&str]) -> Vec<(String, String)> {
    let assignment = |w: &&str| {
        w.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    let rest = match words.first() {
        Some(&"export") => &words[1..],
        _ if !words.is_empty() && words.iter().all(assignment) => words,
        _ => return Vec::new(),
    };
    rest.iter()
        .filter(|w| assignment(w))
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// `tox`/`nox` run the environments' configured commands; arguments after `--` are
/// passed on to them (`{posargs}`), so a pytest filter there selects a subset. `-e ENV`
/// chooses environments, each a configured run, and is no filter by itself.
fn posargs_scope(args: &[&str]) -> Option<Scope> {
    let at = args.iter().position(|a| *a == "--")?;
    let passed = &args[at + 1..];
    table_filter("pytest", passed)
        .or_else(|| table_filter("go", passed))
        .map(|f| Scope::Filtered(TestFilter::argument(&f)))
}

const CARGO_WITH_VALUE: &[&str] = &[
    "-p",
    "--package",
    "-j",
    "--jobs",
    "-F",
    "--features",
    "--target",
    "--target-dir",
    "--manifest-path",
    "--test",
    "--bench",
    "--bin",
    "--example",
    "--profile",
    "--color",
    "--message-format",
    "--config",
    "-Z",
    "--lockfile-path",
    "-E",
    "--filter-expr",
    "--filterset",
    "--partition",
    "--retries",
    "--test-threads",
];

const HARNESS_WITH_VALUE: &[&str] = &[
    "--test-threads",
    "--format",
    "--color",
    "-Z",
    "--logfile",
    "--shuffle-seed",
];

/// cargo's scope: a positional `TESTNAME`, `--skip`/`--exact` or a positional word
/// after `--`, `--exclude PACKAGE`, nextest's `-E`/`--filter-expr`: a subset; `-p X`
/// (without `--workspace`): one package.
fn cargo_scope(args: &[&str]) -> Option<Scope> {
    let nextest = args.first() == Some(&"nextest");
    if nextest && let Some(f) = table_filter("cargo-nextest", args) {
        return Some(Scope::Filtered(TestFilter::argument(&f)));
    }
    let mut rest = args.iter().skip(if nextest { 2 } else { 1 });
    let mut harness = false;
    let mut package = None;
    let mut workspace = false;
    while let Some(a) = rest.next() {
        let filter = |f: &str| Some(Scope::Filtered(TestFilter::argument(f)));
        if *a == "--" {
            harness = true;
        } else if !harness && (*a == "--exclude" || a.starts_with("--exclude=")) {
            return filter("--exclude");
        } else if !harness && matches!(*a, "--workspace" | "--all") {
            workspace = true;
        } else if !harness && matches!(*a, "-p" | "--package") {
            package = rest.next().map(|p| (*p).to_owned());
        } else if let Some(p) = a.strip_prefix("--package=").or(a.strip_prefix("-p")) {
            package = Some(p.to_owned()).filter(|p| !p.is_empty() && !harness);
        } else if harness && HARNESS_WITH_VALUE.contains(a) {
            rest.next();
        } else if harness && matches!(*a, "--skip" | "--exact") {
            return filter(a);
        } else if !harness && CARGO_WITH_VALUE.contains(a) {
            rest.next();
        } else if !a.starts_with('-') {
            return filter(a);
        }
    }
    package.filter(|_| !workspace).map(Scope::Package)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(cmd: &str, env: &[(&str, &str)]) -> Option<Scope> {
        let words: Vec<&str> = cmd.split_whitespace().collect();
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        test_scope(&words, &env)
    }

    fn filtered(option: &str) -> Option<Scope> {
        Some(Scope::Filtered(TestFilter::argument(option)))
    }

    #[test]
    fn scopes_by_runner() {
        let whole = Some(Scope::Whole);
        let table: &[(&str, Option<Scope>)] = &[
            ("cargo test --workspace", whole.clone()),
            (
                "cargo test -p vouch-core",
                Some(Scope::Package("vouch-core".into())),
            ),
            (
                "cargo test --package=vouch-core",
                Some(Scope::Package("vouch-core".into())),
            ),
            ("cargo test --workspace -p a", whole.clone()),
            ("cargo test -p a round", filtered("round")),
            ("cargo nextest run", whole.clone()),
            ("cargo nextest run -E test(round)", filtered("-E")),
            (
                "cargo nextest run --filter-expr=test(round)",
                filtered("--filter-expr"),
            ),
            ("cargo nextest run --workspace --retries 2", whole.clone()),
            ("go test ./... -run=TestRound", filtered("-run")),
            ("tox -e py311", whole.clone()),
            ("tox -e py311 -- -k round", filtered("-k")),
            ("nox -s tests -- -m fast", filtered("-m")),
            ("pytest -kround", filtered("-k")),
            ("ls -la", None),
        ];
        for (cmd, expected) in table {
            assert_eq!(&scope(cmd, &[]), expected, "{cmd}");
        }
    }

    #[test]
    fn pytest_addopts_filters_pytest_inline_or_exported() {
        let by_env = |var: &str, option: &str| {
            Some(Scope::Filtered(TestFilter {
                option: option.to_owned(),
                source: FilterSource::Environment(var.to_owned()),
            }))
        };
        let inline = ["PYTEST_ADDOPTS=-k round", "pytest", "-q"];
        assert_eq!(test_scope(&inline, &[]), by_env("PYTEST_ADDOPTS", "-k"));
        assert_eq!(
            scope("pytest -q", &[("PYTEST_ADDOPTS", "-k round")]),
            by_env("PYTEST_ADDOPTS", "-k")
        );
        assert_eq!(
            scope("tox -e py311", &[("PYTEST_ADDOPTS", "--deselect t::a")]),
            by_env("PYTEST_ADDOPTS", "--deselect")
        );
        assert_eq!(
            scope("pytest -q", &[("PYTEST_ADDOPTS", "-x -q")]),
            Some(Scope::Whole)
        );
        assert_eq!(
            scope("go test ./...", &[("PYTEST_ADDOPTS", "-k a")]),
            Some(Scope::Whole)
        );
    }

    #[test]
    fn test_runs_that_select_a_subset_by_name_have_a_filter() {
        let table: &[(&str, Option<&str>)] = &[
            ("cargo test --workspace", None),
            ("cargo test --workspace round", Some("round")),
            ("cargo test -p vouch-core --features x", None),
            ("cargo test --workspace --exclude slow", Some("--exclude")),
            ("cargo test --workspace --exclude=slow", Some("--exclude")),
            (
                "cargo nextest run --workspace --exclude slow",
                Some("--exclude"),
            ),
            ("cargo test -- --exclude-should-panic", None),
            ("cargo test --workspace -- --skip slow", Some("--skip")),
            ("cargo test -- --nocapture", None),
            (
                "cargo test -- --test-threads 1 --exact a::b",
                Some("--exact"),
            ),
            ("cargo test -- --test-threads 1", None),
            ("timeout 600 cargo test round", Some("round")),
            ("cargo nextest run", None),
            ("cargo nextest run -p x round", Some("round")),
            ("pytest -q", None),
            ("pytest -k 'not slow'", Some("-k")),
            ("python -m pytest -m fast", Some("-m")),
            ("go test ./... -run TestRound", Some("-run")),
            ("npx jest", None),
            // An interpreter's `-m MODULE` is not pytest's marker filter.
            ("python -m pytest", None),
            ("python3 -m pytest -q", None),
            ("python -m unittest", None),
            ("python3.12 -u -m pytest", None),
            ("python -X dev -m pytest -m 'not slow'", Some("-m")),
            ("python -m unittest -k round", Some("-k")),
            // A launcher's own options are not the runner's.
            ("uv run pytest", None),
            ("uv run --with pytest-xdist pytest -k round", Some("-k")),
            ("poetry run pytest -m fast", Some("-m")),
            ("npx vitest run", None),
            ("npx jest -t round", Some("-t")),
            ("pnpm exec vitest run -t round", Some("-t")),
        ];
        for (cmd, expected) in table {
            let words: Vec<&str> = cmd.split_whitespace().collect();
            let option = match test_scope(&words, &[]) {
                Some(Scope::Filtered(f)) => Some(f.option),
                _ => None,
            };
            assert_eq!(option.as_deref(), *expected, "{cmd}");
        }
    }
}
