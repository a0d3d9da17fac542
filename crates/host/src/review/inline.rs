//! Source the host gives inline: patches of assigned files and, for the verifier, the
//! lines around each candidate. Everything given is recorded in the execution's ledger.

use vouch_core::{Candidate, SourceWindow};

use super::env::ReviewEnv;
use crate::tools::RepoTools;

/// Lines of context given around a candidate for the verifier.
pub const CANDIDATE_CONTEXT_LINES: u32 = 12;

/// Inline blocks and what did not fit.
pub struct InlineSource {
    /// Text blocks, in order.
    pub blocks: Vec<String>,
    /// Paths whose patch did not fit the inline budget, or could not be retrieved.
    pub omitted: Vec<String>,
    /// Paths whose patch could not be retrieved (a source lookup gap).
    pub failed: Vec<String>,
}

/// The patches of `paths`, in order, until `env.inline_bytes` is used up. Each shown
/// patch's windows are recorded in `tools`' ledger as given source.
pub fn patches(env: &ReviewEnv, tools: &RepoTools, paths: &[String]) -> InlineSource {
    let mut out = InlineSource {
        blocks: vec![],
        omitted: vec![],
        failed: vec![],
    };
    let mut used = 0usize;
    for path in paths {
        match env.reader.diff(path) {
            Ok(diff) => {
                if used + diff.text.len() > env.inline_bytes {
                    out.omitted.push(path.clone());
                    continue;
                }
                used += diff.text.len();
                for w in diff.windows {
                    tools.record(w);
                }
                out.blocks.push(format!(
                    "<patch path={:?}>\n{}\n</patch>",
                    path,
                    diff.text.trim_end()
                ));
            }
            Err(_) => {
                out.omitted.push(path.clone());
                out.failed.push(path.clone());
            }
        }
    }
    out
}

/// The lines around each candidate at its revision (± [`CANDIDATE_CONTEXT_LINES`]),
/// recorded in `tools`' ledger. Candidates whose file cannot be read are skipped (the
/// verifier can still read with tools, or decide `unresolved`).
pub fn candidate_windows(
    env: &ReviewEnv,
    tools: &RepoTools,
    candidates: &[Candidate],
) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut seen: Vec<SourceWindow> = Vec::new();
    for c in candidates {
        let start = c.start_line.saturating_sub(CANDIDATE_CONTEXT_LINES).max(1);
        let end = c.end_line.saturating_add(CANDIDATE_CONTEXT_LINES);
        let Ok(read) = env
            .reader
            .read_file(c.revision, &c.path, Some(start), Some(end))
        else {
            continue;
        };
        let Some(window) = read.window else { continue };
        if seen.contains(&window) {
            continue;
        }
        seen.push(window.clone());
        tools.record(window);
        blocks.push(format!(
            "<source for={:?}>\n{}\n</source>",
            c.id,
            read.text.trim_end()
        ));
    }
    blocks
}
