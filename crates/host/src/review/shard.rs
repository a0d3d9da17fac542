//! Sharding a lane instance: the host estimates what each assigned file costs a prompt
//! (its patch, its summary line, its list entries) and what the stable part of the
//! stage's requests costs, [`vouch_core::plan_shards`] decides the grouping, and each
//! shard becomes a normal [`StagePlan`] with its own slice of the canonical list.

use vouch_core::{
    ChangedFile, CoverageComparison, FileCost, FilePart, ShardBudget, ShardPlan, estimate_tokens,
    plan_shards,
};
use vouch_llm::{ToolBox, json_text_len, json_value_len};
use vouch_specialist_kit::contract::token_bound;

use super::contract::fitted_contract;
use super::env::ReviewEnv;
use super::stage::{StagePlan, prompt_request};
use crate::policy::{
    FORCED_SYNTHESIS, RetrySource, coverage_retry_message, expected_files_section,
    output_contract_section, tools_section, truncation_notice,
};
use crate::tools::RepoTools;

/// Room for change-specific content under `max_request_tokens` below which a lane does
/// not run (its requests would be all overhead).
pub const MIN_SHARD_TOKENS: u64 = 256;

/// The JSON-escaped size of each sized file's whole patch (`None`: the `diff` tool cuts
/// it, so it is never given whole), computed once per review and shared by its lanes.
pub(super) type PatchSizes = std::collections::BTreeMap<String, Option<usize>>;

/// A lane instance as shards.
pub(super) struct LaneShards {
    /// The shard plans, in order (one plan, the lane's own label, when it fits).
    pub plans: Vec<StagePlan>,
    /// Files left out because the lane reached `max_shards`, in canonical order.
    pub left_out: Vec<String>,
    /// Why the lane cannot run within its request bound, if it cannot.
    pub problem: Option<String>,
}

/// Estimated tokens of everything a stage's largest request carries besides its shard's
/// change-specific content: system and role prompt, policy evidence, tools section and
/// tool definitions, the output contract (in the message and as `response_format`), the
/// fixed text of the expected-files and coverage-retry sections, and the previous answer
/// a coverage retry shows back (at its contract's bound, at most the output cap).
fn stable_tokens(env: &ReviewEnv, plan: &StagePlan) -> Result<u64, String> {
    let empty = StagePlan {
        assigned: vec![],
        ..plan.clone()
    };
    let handle = &plan.handle;
    let prompt = handle
        .render_prompt(&prompt_request(env, &empty))
        .map_err(|e| e.to_string())?;
    // The contract without the shard's paths: what a receipt adds per file is in
    // [`fixed_tokens`], so the stable part does not grow with the lane's assignment.
    let schema = fitted_contract(&env.fitted_caps, &empty)
        .map_err(|e| e.to_string())?
        .schema;
    let tools = RepoTools::new(env.reader.clone());
    let mut bytes = json_text_len(&prompt.system)
        + json_text_len(&prompt.user)
        + json_text_len(&tools_section(0, 0, 0))
        + json_text_len(&expected_files_section(&[]))
        + json_text_len(&output_contract_section(&schema))
        + json_value_len(&schema)
        + json_text_len(&truncation_notice(
            plan.budget.max_output_tokens_per_request,
        ))
        + json_text_len(FORCED_SYNTHESIS)
        + json_text_len(&coverage_retry_message(
            &[],
            &serde_json::Value::Null,
            &CoverageComparison {
                complete: false,
                reported_incomplete: true,
                missing_files: vec![],
                unexpected_files: vec![],
            },
            &RetrySource::Tools,
        ))
        + 1_024;
    if env.tools_enabled() {
        bytes += json_value_len(&tools.specs());
    }
    // The previous answer without its receipt paths, at its contract's bound in
    // characters (`token_bound` counts one per character; the fitted contract keeps it
    // within the output budget), is shown pretty-printed inside a JSON string: count its
    // characters twice.
    let answer = token_bound(&schema).min(u64::from(plan.budget.max_output_tokens_per_request));
    let answer = usize::try_from(2 * answer).unwrap_or(usize::MAX);
    Ok(estimate_tokens(bytes.saturating_add(answer)))
}

/// What `file` adds to any shard holding it besides its patch: its change-summary line
/// and its entries in the expected list, the retry's missing and expected lists and the
/// previous receipt.
fn fixed_tokens(file: &ChangedFile) -> u64 {
    let path = json_text_len(&file.path) + 1;
    let summary = 2 * file.path.len()
        + file.previous_path.as_ref().map_or(0, |p| p.len())
        + 80
        + 24 * file
            .hunks
            .len()
            .min(vouch_specialist_kit::render::MAX_HUNKS_SHOWN);
    estimate_tokens(summary + 4 * path)
}

/// Estimated tokens of each hunk of `file` given as numbered lines (head lines, and the
/// base lines of what it removes), from the file's text at both sides.
fn piece_tokens(env: &ReviewEnv, file: &ChangedFile) -> Vec<u64> {
    let text = |revision, path: &str| {
        env.reader
            .read_text(revision, path)
            .ok()
            .flatten()
            .unwrap_or_default()
    };
    let head = text(vouch_core::Revision::Head, &file.path);
    let base = text(
        vouch_core::Revision::Base,
        file.previous_path.as_deref().unwrap_or(&file.path),
    );
    let head: Vec<&str> = head.lines().collect();
    let base: Vec<&str> = base.lines().collect();
    let span = |lines: &[&str], start: u32, count: u32| -> usize {
        let from = (start.max(1) - 1) as usize;
        let to = (from + count as usize).min(lines.len());
        let known: usize = lines
            .get(from..to)
            .unwrap_or(&[])
            .iter()
            .map(|l| json_text_len(l) + 8)
            .sum();
        // Lines the text does not have (an unreadable side) count as 80 bytes each.
        known + (count as usize).saturating_sub(to.saturating_sub(from)) * 80
    };
    file.hunks
        .iter()
        .map(|h| {
            let bytes =
                200 + span(&head, h.new_start, h.new_lines) + span(&base, h.old_start, h.old_lines);
            estimate_tokens(bytes)
        })
        .collect()
}

/// The cost of `path` for the shard planner; its patch is computed (and its size kept,
/// not its text). A patch the `diff` tool cuts at its own bound cannot be given whole.
fn file_cost(env: &ReviewEnv, path: &str, cap: u64, sizes: &mut PatchSizes) -> FileCost {
    let Some(file) = env.snapshot.file(path) else {
        return FileCost {
            path: path.to_string(),
            fixed: estimate_tokens(4 * json_text_len(path)),
            whole: 0,
            pieces: vec![],
        };
    };
    let patch = sizes
        .entry(path.to_string())
        .or_insert_with(|| match env.reader.diff(path) {
            Ok(d) if !d.truncated => Some(json_text_len(&d.text)),
            _ => None,
        });
    let whole = match *patch {
        Some(bytes) => estimate_tokens(bytes + 40),
        // Never given whole: split by hunks (or, without hunks, named as not given).
        None => u64::MAX / 4,
    };
    let fixed = fixed_tokens(file);
    let pieces = if fixed + whole > cap {
        piece_tokens(env, file)
    } else {
        vec![]
    };
    FileCost {
        path: path.to_string(),
        fixed,
        whole,
        pieces,
    }
}

/// Rule (issue 10, "Sharding" and "Prompt economy"): a shard's change-specific content
/// fits the smaller of `max_shard_tokens` and what `max_request_tokens` leaves after the
/// stable part of the stage's largest request (estimated at
/// [`vouch_core::BYTES_PER_TOKEN`] bytes per token); without tools a coverage retry
/// repeats the missing patches, so the shard gets half. Its receipt fits half the output
/// cap, leaving the other half for candidates and the summary.
/// The prefetch, in every request of the execution, gets what is left after the stable
/// part and the shard's change content: at most `prefetch_tokens`, less when the bound
/// is tight, so the change itself always comes first.
fn shard_budget(env: &ReviewEnv, plan: &StagePlan) -> Result<(ShardBudget, u32), String> {
    let limits = plan.shards;
    let stable = stable_tokens(env, plan)?;
    let room = u64::from(limits.max_request_tokens).saturating_sub(stable);
    if room < MIN_SHARD_TOKENS {
        return Err(format!(
            "{} did not run: the stable part of its requests (about {stable} tokens) leaves \
             {room} tokens for the change under max_request_tokens ({}); raise \
             max_request_tokens or shorten the policy evidence",
            plan.lane, limits.max_request_tokens
        ));
    }
    let change = u64::from(limits.max_shard_tokens).min(room);
    let max_tokens = if env.tools_enabled() {
        change
    } else {
        change / 2
    };
    let prefetch = room
        .saturating_sub(change)
        .min(u64::from(plan.prefetch_tokens));
    let budget = ShardBudget {
        max_tokens: max_tokens.max(1),
        max_receipt_tokens: u64::from(plan.budget.max_output_tokens_per_request) / 2,
        max_shards: limits.max_shards.max(1) as usize,
    };
    Ok((budget, u32::try_from(prefetch).unwrap_or(u32::MAX)))
}

/// The stage plans of `plan`'s shards: one per shard, its expected list the canonical
/// list restricted to the shard, labelled `label [shard k/n]` when there is more than
/// one (the label alone otherwise).
fn plans(
    plan: &StagePlan,
    shards: &ShardPlan,
    budget: &ShardBudget,
    prefetch_tokens: u32,
) -> Vec<StagePlan> {
    let inline_bytes = plan.inline_bytes.min(
        usize::try_from(budget.max_tokens * vouch_core::BYTES_PER_TOKEN).unwrap_or(usize::MAX),
    );
    let n = shards.shards.len();
    // The lane's own lists stay out of the template: cloning them per shard would cost
    // the lane's files times its shards.
    let template = StagePlan {
        assigned: Vec::new(),
        split: Vec::new(),
        ..plan.clone()
    };
    shards
        .shards
        .iter()
        .enumerate()
        .map(|(k, shard)| StagePlan {
            label: if n > 1 {
                format!("{} [shard {}/{n}]", plan.lane, k + 1)
            } else {
                plan.lane.clone()
            },
            assigned: shard.paths(),
            split: shard
                .entries
                .iter()
                .filter_map(|e| match &e.part {
                    FilePart::Whole => None,
                    FilePart::Pieces(r) => Some((e.path.clone(), r.clone())),
                })
                .collect(),
            inline_bytes,
            prefetch_tokens,
            ..template.clone()
        })
        .collect()
}

/// Splits a lane instance into shards (see [`shard_budget`] and
/// [`vouch_core::plan_shards`]).
pub(super) fn shard_lane(env: &ReviewEnv, plan: StagePlan, sizes: &mut PatchSizes) -> LaneShards {
    let (budget, prefetch_tokens) = match shard_budget(env, &plan) {
        Ok(b) => b,
        Err(problem) => {
            return LaneShards {
                plans: vec![],
                left_out: vec![],
                problem: Some(problem),
            };
        }
    };
    let mut costs: Vec<FileCost> = Vec::with_capacity(plan.assigned.len());
    for path in &plan.assigned {
        // Sizing computes each patch: a cancelled review stops here, and the lane runs
        // as one plan that the cancellation then ends before it starts.
        if env.cancel.is_cancelled() {
            return LaneShards {
                plans: vec![plan],
                left_out: vec![],
                problem: None,
            };
        }
        costs.push(file_cost(env, path, budget.max_tokens, sizes));
    }
    let shards = plan_shards(&costs, budget);
    LaneShards {
        plans: plans(&plan, &shards, &budget, prefetch_tokens),
        left_out: shards.left_out,
        problem: None,
    }
}
