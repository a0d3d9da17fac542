//! vouch-forge: publishing a saved vouch review to a pull request on GitHub, GitLab or
//! Gitea, and reading the reviewed change from the CI environment.
//!
//! The decisions are pure functions of values: [`diff`] (which head lines a forge lets a
//! comment sit on), [`compose`] (the summary and the inline comments a report asks for),
//! [`plan`] (what to create, update, resolve or leave, given what the pull request
//! already carries) and [`ci`] (the pull request a CI job runs for). The REST clients in
//! [`client`] only load the pull request's state and execute a [`plan::Plan`].

pub mod ci;
pub mod client;
pub mod compose;
pub mod diff;
mod error;
mod forge;
mod http;
pub mod plan;
mod publish;

pub use error::ForgeError;
pub use forge::{Forge, Target, Token};
pub use publish::{PublishSummary, publish};
