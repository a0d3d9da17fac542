//! The `vouch` binary: `vouch review`, `vouch validate-report`, `vouch mcp`.

mod mcp;
mod validate;

fn main() {}
