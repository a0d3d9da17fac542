//! End-to-end tests of `vouch review`: the real binary, real git repositories, real
//! HTTP to a scripted OpenAI-compatible server on 127.0.0.1, built-in plugins through
//! the C-ABI table.

mod binary;
mod broken_output;
mod cancel_prepare;
mod composition;
mod context;
mod coverage_retry;
mod diagnostics;
mod endpoint;
mod eval;
mod exchange;
mod excluded_move;
mod fixture_range;
mod intake;
mod long_lines;
mod outputs;
mod panel;
mod publish;
mod review;
mod schema;
mod shard;
mod terminal;
mod tool_budget;
mod user_config;
mod window;
