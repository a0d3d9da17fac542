//! vouch-eval: measuring review quality on golden-comment benchmarks.
//!
//! - [`case`]: the cases file (JSON or JSONL) and the adapter for the public
//!   golden-comment benchmark files with a checkout mapping.
//! - [`category`]: categories, scoring profiles (strict, core, all) and severities.
//! - [`golden_path`]: golden comments' paths, normalised like vouch's and checked
//!   against the files of each case's change.
//! - [`score`]: pure rules — grouping duplicate findings, location matching, counts,
//!   precision/recall/F-beta, aggregation and spread over repeated runs.
//! - [`judge`]: the judge's structured question per plausible (finding, comment) pair.
//! - [`results`]: the results document (schema `vouch.eval-results/1`) and its Markdown
//!   and CSV renderings.
//!
//! Running reviews is not done here: the `vouch eval` command runs each case through
//! the normal review and hands the published findings to these functions.

pub mod case;
pub mod category;
pub mod golden_path;
pub mod judge;
pub mod results;
pub mod score;
