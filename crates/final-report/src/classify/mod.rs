//! Classifying session commands and tool calls by what they do to the world.
//!
//! Commands are split like a POSIX shell would split them (quotes, `&&`, `||`, `;`,
//! `|`, redirections) and each simple command is mapped to typed [`Effect`]s by one
//! declarative table per tool family (`PROGRAMS` in `simple.rs`, `GIT`, the forge
//! CLIs' `GH`/`TEA`/`GLAB`, `JJ`, `TEST_RUNNERS`, and `GIT_TOOL_VERBS` for local git tools).
//! The tables are documented in docs/final-report.md; a command no row names is
//! treated as read-only.

use serde_json::Value;

mod effect;
mod forge;
mod git;
mod jj;
mod runners;
mod shell;
mod simple;
mod table;
#[cfg(test)]
mod table_tests;
#[cfg(test)]
mod tests;
mod tools;

pub(crate) use effect::*;
pub(crate) use forge::*;
pub(crate) use git::*;
pub(crate) use jj::*;
pub(crate) use runners::*;
pub(crate) use shell::*;
pub(crate) use simple::*;
pub(crate) use tools::*;

/// Collapse runs of whitespace to one space and trim: how commands are compared.
pub(crate) fn normalize(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Everything a command line does, over all its simple commands.
pub(crate) fn classify_command(line: &str) -> Vec<Effect> {
    classify_line(line, &[])
}

/// [`classify_command`] in a session whose exported variables are `env`.
pub(crate) fn classify_line(line: &str, env: &[(String, String)]) -> Vec<Effect> {
    classify_nested(line, env, 0)
}

/// Most levels of command substitution looked into (hostile nesting cannot exhaust the
/// stack).
const MAX_SUBSTITUTION_DEPTH: usize = 8;

fn classify_nested(line: &str, env: &[(String, String)], depth: usize) -> Vec<Effect> {
    let mut effects = Vec::new();
    // What a command substitution (`` `…` ``, `$(…)`) runs is a command too.
    let inner = match depth < MAX_SUBSTITUTION_DEPTH {
        true => substitutions(line),
        false => vec![],
    };
    for inner in inner {
        for effect in classify_nested(inner, env, depth + 1) {
            add_effect(&mut effects, effect);
        }
    }
    for simple in split_shell(line) {
        for effect in classify_simple_in(&simple, env) {
            add_effect(&mut effects, effect);
        }
    }
    effects
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
