//! Test support for vouch: a scripted OpenAI-compatible HTTP server on 127.0.0.1
//! ([`openai`]) and builders for real git repositories in temporary directories ([`git`]).

pub mod cargo;
pub mod git;
pub mod openai;
