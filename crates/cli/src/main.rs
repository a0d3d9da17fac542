//! The `vouch` binary.
fn main() {}
