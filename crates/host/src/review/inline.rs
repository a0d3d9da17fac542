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
                for w in &diff.windows {
                    tools.record(w.clone());
                }
                for s in &diff.spans {
                    tools.record_span(s.clone());
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;
    use tokio_util::sync::CancellationToken;
    use vouch_core::FileStatus;
    use vouch_git::SourceReader;
    use vouch_llm::{EndpointConfig, ModelClient, ToolBox};
    use vouch_testkit::git::TestRepo;

    use super::*;
    use crate::diagnostics::Collector;
    use crate::progress::Silent;
    use crate::review::env::ToolsMode;

    fn env(repo: &TestRepo, base: &str, head: &str) -> ReviewEnv {
        let snapshot = Arc::new(vouch_git::snapshot(repo.path(), Some(base), head).unwrap());
        let reader = Arc::new(SourceReader::open(repo.path(), &snapshot).unwrap());
        let config = EndpointConfig::new("http://127.0.0.1:9/v1", "unused");
        ReviewEnv {
            snapshot,
            reader,
            client: Arc::new(ModelClient::new(config).unwrap()),
            model_clients: Default::default(),
            intent: None,
            policy: vec![],
            tools: ToolsMode::On,
            tools_rejected: Default::default(),
            inline_bytes: 12_000,
            presenter: Arc::new(Silent),
            diagnostics: Arc::new(Collector::default()),
            job_id: "test".into(),
            cancel: CancellationToken::new(),
            prefetch: Default::default(),
        }
    }

    /// The `diff` tool and the inline patch section show a renamed file's patch as the
    /// snapshot paired it, from one computation shared by both.
    #[test]
    fn the_diff_tool_and_inline_sections_share_the_snapshot_patch_of_a_rename() {
        let repo = TestRepo::new();
        let body: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        repo.write("docs/guide.md", &body).write("keep.txt", "k\n");
        let base = repo.commit("base");
        repo.write("docs/guide.md", body.replace("line 7\n", "line seven\n"))
            .rename("docs/guide.md", "docs/manual.md");
        let head = repo.commit("rename");
        let env = env(&repo, &base, &head);
        let file = env.snapshot.file("docs/manual.md").unwrap().clone();
        assert_eq!(file.status, FileStatus::Renamed);

        let tools = RepoTools::new(env.reader.clone());
        let inline = patches(&env, &tools, &["docs/manual.md".to_string()]);
        let from_tool = tools
            .call("diff", &json!({"path": "docs/manual.md"}))
            .unwrap();
        assert_eq!(env.reader.patches_computed(), 1, "one computation for both");
        assert_eq!(
            inline.blocks,
            [format!(
                "<patch path=\"docs/manual.md\">\n{}\n</patch>",
                from_tool.trim_end()
            )]
        );
        assert!(from_tool.contains("rename from docs/guide.md\nrename to docs/manual.md\n"));
        let headers: Vec<&str> = from_tool.lines().filter(|l| l.starts_with("@@")).collect();
        let snapshot_headers: Vec<&str> = file.hunks.iter().map(|h| h.header.as_str()).collect();
        assert_eq!(headers, snapshot_headers);
        assert!(from_tool.contains("-line 7\n+line seven\n"), "{from_tool}");
    }
}
