//! Test support for vouch: a scripted OpenAI-compatible HTTP server on 127.0.0.1
//! ([`openai`]), a local GitHub/GitLab/Gitea REST server ([`forge`]) and builders for real
//! git repositories in temporary directories ([`git`]), and synthetic changes of any size
//! ([`synth`]).

pub mod cargo;
pub mod forge;
pub mod git;
pub mod openai;
pub mod synth;
