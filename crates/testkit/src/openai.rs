//! A scripted OpenAI-compatible chat-completions server on 127.0.0.1.
//!
//! End-to-end tests of vouch talk real HTTP to this server. A [`Script`] is an ordered
//! list of [`Rule`]s; each rule has a [`Match`] and a queue of [`Reply`]s. Requests
//! from concurrent lanes arrive in any order, so a request is served by the **first
//! rule that matches it and still has a reply left** (rules are consulted in the
//! order they were added). A [`Reply::computed`] reply is built from the request body
//! when it is served (a model that answers what it is asked). An endpoint check's minimal request (`max_tokens: 1`) no
//! rule serves is answered `pong`. Any other request no rule can serve gets HTTP 500 with a body
//! saying `no scripted reply for request` and is recorded as unmatched, so a test
//! can assert `server.unmatched().is_empty()`.
//!
//! Served routes: `POST /v1/chat/completions` (scripted), `GET /props` (llama.cpp's
//! dialect only) and `GET /v1/models`
//! (the server's model list, [`DEFAULT_MODELS`] unless started with
//! [`ScriptedServer::start_as`], which also imitates a provider's paths, authentication
//! and errors: see [`Dialect`]). Every request, including unknown routes, is recorded
//! with its parsed JSON body, headers, arrival [`std::time::Instant`] and the rule
//! that served it.
//!
//! ```no_run
//! # async fn demo() {
//! use vouch_testkit::openai::{Match, Reply, Rule, Script, ScriptedServer};
//! let server = ScriptedServer::start(
//!     Script::new()
//!         .rule(
//!             Rule::when(Match::system_contains("generic-investigator #1"))
//!                 .reply(Reply::tool_call("read_file", r#"{"path":"src/lib.rs"}"#))
//!                 .reply(Reply::content(r#"{"findings":[]}"#)),
//!         )
//!         .on(Match::any(), [Reply::status(429).header("Retry-After", "1")]),
//! )
//! .await;
//! let base_url = server.base_url(); // "http://127.0.0.1:PORT/v1"
//! # let _ = base_url;
//! assert!(server.unmatched().is_empty());
//! # }
//! ```

mod dialect;
mod matcher;
mod record;
mod reply;
mod script;
mod server;

#[cfg(test)]
mod tests;

pub use dialect::{DEFAULT_MODELS, Dialect};
pub use matcher::Match;
pub use record::{RecordedRequest, ServedBy};
pub use reply::{DEFAULT_USAGE, HOLD_LIMIT, Reply, SCRIPTED_MODEL};
pub use script::{Rule, Script};
pub use server::ScriptedServer;
