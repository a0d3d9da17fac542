//! vouch's scale benchmark (issue "Scale without skipping", item 6; `BENCHMARKS.md`).
//!
//! For each size N it generates a synthetic repository ([`vouch_testkit::synth`]), then
//! measures, in one run on one machine: vouch's snapshot of the change against
//! `git diff -M --numstat` of the same range; a whole review by the built `vouch` binary
//! against the instant, perfect scripted model ([`model`]): host CPU, wall, peak RSS,
//! requests, prompt bytes per changed line, the largest request, coverage and opinion;
//! and, for the sizes asked, the same review with a fixed-latency model against its
//! critical path ([`critical`]). Never run in CI: only a small smoke test is.
//!
//! `vouch-bench cost` ([`cost_run`]) reviews one given change instead (a real
//! repository's range, e.g. the fixtures of `scripts/cost-fixture`) at each context
//! window, and reports requests, prompt tokens per changed line, the share a prompt cache
//! would serve and executions per lane, beside a one-prompt reviewer's request for the
//! same change; its rules are in [`cost`].

pub mod child;
pub mod cost;
pub mod cost_run;
pub mod critical;
pub mod model;
pub mod run;
pub mod table;
pub mod windows;

pub use cost_run::{Change, CostConfig, CostRow, run_cost};
pub use model::{Answers, Reader, Usage};
pub use run::{Config, Row, bench_manifest, run};
pub use table::{COLUMNS, cost_table, markdown_table};

/// vouch's default composition, which the benchmark reviews with (see [`bench_manifest`]).
pub const DEFAULT_MANIFEST: &str = include_str!("../../../manifests/default.toml");
