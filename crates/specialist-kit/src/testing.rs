//! Test support shared by the built-in specialist plugins' prompt tests. Hidden from the
//! docs and not part of the plugin ABI.
//!
//! Each built-in's `tests/prompt.rs` invokes [`specialist_prompt_tests!`](crate::specialist_prompt_tests)
//! once; it generates the four tests every built-in has (prompt and contract snapshots,
//! the small-model word budget, the descriptor and a contract reply). The snapshot macros
//! name `insta`, which resolves in the invoking crate: plugins carry it as a
//! dev-dependency, this crate does not depend on it. The functions here panic with an
//! assertion message on failure, as test helpers do.

#![doc(hidden)]

use serde_json::json;

use crate::sample;
use vouch_abi::Specialist;
use vouch_abi::{Area, PAYLOAD_VERSION, ParsedReply, PromptRequest, RenderedPrompt, Role};

/// Most whitespace-separated words a built-in's system prompt may have, with tools on or
/// off, so that it leaves room in a small model's context for the host's policy sections.
pub const MAX_SYSTEM_PROMPT_WORDS: usize = 600;

/// Which standard contract a specialist's replies follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyKind {
    /// `{candidates, coverage, summary}`: [`ParsedReply::Candidates`].
    Candidates,
    /// `{decisions}`: [`ParsedReply::Decisions`].
    Decisions,
}

/// The sample prompt request ([`sample::prompt_request`]) labelled `"{id} #1"`, with the
/// repository tools available or not.
pub fn prompt_request(id: &str, tools_available: bool) -> PromptRequest {
    PromptRequest {
        label: format!("{id} #1"),
        tools_available,
        ..sample::prompt_request()
    }
}

/// `specialist`'s prompt for [`prompt_request`]`(id, tools_available)`.
///
/// # Panics
/// When the specialist refuses the sample request.
pub fn render<S: Specialist>(specialist: &S, id: &str, tools_available: bool) -> RenderedPrompt {
    specialist
        .render_prompt(&prompt_request(id, tools_available))
        .expect("renders")
}

/// Asserts that the system prompt has at most [`MAX_SYSTEM_PROMPT_WORDS`] words with the
/// tools available and without.
pub fn assert_system_prompt_fits_a_small_model<S: Specialist>(specialist: &S, id: &str) {
    for tools in [true, false] {
        let prompt = render(specialist, id, tools);
        let words = prompt.system.split_whitespace().count();
        assert!(
            words <= MAX_SYSTEM_PROMPT_WORDS,
            "{id} system prompt has {words} words"
        );
    }
}

/// Asserts that the descriptor has `id`, `version`, `role` and this crate's
/// [`PAYLOAD_VERSION`].
pub fn assert_describes_itself<S: Specialist>(specialist: &S, id: &str, version: &str, role: Role) {
    let descriptor = specialist.describe();
    assert_eq!(descriptor.id, id);
    assert_eq!(descriptor.version, version);
    assert_eq!(descriptor.role, role);
    assert_eq!(descriptor.payload_version, PAYLOAD_VERSION);
}

/// Asserts that the sample reply of `kind` ([`sample::empty_candidate_reply`] or
/// [`sample::decision_reply`]) parses into that kind, and that an object fitting no
/// contract (`{"unexpected": true}`) is an error.
pub fn assert_parses_a_contract_reply<S: Specialist>(specialist: &S, kind: ReplyKind) {
    let parsed = match kind {
        ReplyKind::Candidates => specialist.parse(&sample::empty_candidate_reply()),
        ReplyKind::Decisions => specialist.parse(&sample::decision_reply()),
    };
    match (kind, parsed) {
        (ReplyKind::Candidates, Ok(ParsedReply::Candidates(_)))
        | (ReplyKind::Decisions, Ok(ParsedReply::Decisions(_))) => {}
        (kind, other) => panic!("the sample {kind:?} reply parsed as {other:?}"),
    }
    assert!(specialist.parse(&json!({"unexpected": true})).is_err());
}

/// Asserts that `specialist` reports only in the review area `area`: a sample candidate
/// ([`sample::one_candidate_reply`]) in `area` written in upper case parses (areas are
/// lower-cased), one in `other` is an error naming `` candidates[0].area `{other}` ``, and
/// the contract's `candidates[].area` enum is exactly `[area]`.
pub fn assert_reports_only_in_area<S: Specialist>(specialist: &S, area: Area, other: Area) {
    let (area, other) = (area.as_str(), other.as_str());
    let accepted = specialist.parse(&sample::one_candidate_reply(&area.to_uppercase()));
    assert!(accepted.is_ok(), "{accepted:?}");
    let err = specialist
        .parse(&sample::one_candidate_reply(other))
        .expect_err("a candidate in another area is rejected");
    assert!(
        err.contains(&format!("candidates[0].area `{other}`")),
        "{err}"
    );
    let contract = specialist.contract(&sample::contract_request());
    assert_eq!(
        contract["properties"]["candidates"]["items"]["properties"]["area"]["enum"],
        json!([area])
    );
}

/// Runs `$body` with insta snapshots stored in `<workspace>/snapshots` (the invoking
/// crate's manifest directory is two levels below the workspace root) and named without
/// a module prefix, so each name starts with the plugin id instead.
#[doc(hidden)]
#[macro_export]
macro_rules! in_workspace_snapshots {
    ($body:block) => {
        insta::with_settings!({
            snapshot_path => concat!(env!("CARGO_MANIFEST_DIR"), "/../../snapshots"),
            prepend_module_to_snapshot => false,
        }, $body)
    };
}

/// Snapshots a [`RenderedPrompt`](vouch_abi::RenderedPrompt)'s system and user messages
/// under the names `$system` and `$user` in the workspace snapshots
/// ([`in_workspace_snapshots!`](crate::in_workspace_snapshots)).
#[doc(hidden)]
#[macro_export]
macro_rules! assert_prompt_snapshots {
    ($prompt:expr, $system:expr, $user:expr) => {{
        let prompt: $crate::abi::RenderedPrompt = $prompt;
        $crate::in_workspace_snapshots!({
            insta::assert_snapshot!($system, prompt.system);
            insta::assert_snapshot!($user, prompt.user);
        })
    }};
}

/// The prompt tests every built-in specialist has, generated as `#[test]` functions in
/// the invoking test crate:
///
/// ```text
/// vouch_abi::specialist_prompt_tests!(BugReview, ID, VERSION == "1.0.0", Role::Reviewer, Candidates);
/// ```
///
/// - `prompt_matches_snapshot`: with tools, the system prompt names `read_file`, and the
///   system and user messages match the snapshots `{id}-system` and `{id}-user`;
/// - `contract_matches_snapshot`: the contract for [`sample::contract_request`](crate::sample::contract_request)
///   matches the JSON snapshot `{id}-contract`;
/// - `system_prompt_fits_a_small_model`: [`testing::assert_system_prompt_fits_a_small_model`](crate::testing::assert_system_prompt_fits_a_small_model);
/// - `describes_itself_and_parses_a_contract_reply`: the crate's `VERSION` constant is
///   the pinned version, the descriptor matches ([`testing::assert_describes_itself`](crate::testing::assert_describes_itself)),
///   and the sample reply of the given [`testing::ReplyKind`](crate::testing::ReplyKind)
///   parses while a foreign object does not.
///
/// Snapshots live in `<workspace>/snapshots`; the invoking crate needs `insta` (with
/// the `json` feature) as a dev-dependency.
#[doc(hidden)]
#[macro_export]
macro_rules! specialist_prompt_tests {
    ($specialist:expr, $id:expr, $version:ident == $pinned:literal, $role:expr, $reply:ident $(,)?) => {
        #[test]
        fn prompt_matches_snapshot() {
            let prompt = $crate::testing::render(&$specialist, $id, true);
            assert!(prompt.system.contains("read_file"));
            $crate::assert_prompt_snapshots!(
                prompt,
                format!("{}-system", $id),
                format!("{}-user", $id)
            );
        }

        #[test]
        fn contract_matches_snapshot() {
            let contract = $crate::abi::Specialist::contract(
                &$specialist,
                &$crate::sample::contract_request(),
            );
            $crate::in_workspace_snapshots!({
                insta::assert_json_snapshot!(format!("{}-contract", $id), contract);
            });
        }

        #[test]
        fn system_prompt_fits_a_small_model() {
            $crate::testing::assert_system_prompt_fits_a_small_model(&$specialist, $id);
        }

        #[test]
        fn describes_itself_and_parses_a_contract_reply() {
            assert_eq!($version, $pinned);
            $crate::testing::assert_describes_itself(&$specialist, $id, $pinned, $role);
            $crate::testing::assert_parses_a_contract_reply(
                &$specialist,
                $crate::testing::ReplyKind::$reply,
            );
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{ContractRequest, candidate_contract, parse_candidate_reply};
    use serde_json::Value;
    use vouch_abi::Descriptor;

    /// A candidate-producing specialist whose prompt is a fixed number of words.
    struct Words(usize);

    /// A candidate-producing specialist that reports only in the `security` area.
    struct SecurityOnly;

    impl Specialist for Words {
        fn describe(&self) -> Descriptor {
            Descriptor {
                id: "words".into(),
                version: "1.0.0".into(),
                role: Role::Reviewer,
                payload_version: PAYLOAD_VERSION,
                description: String::new(),
            }
        }

        fn render_prompt(&self, request: &PromptRequest) -> Result<RenderedPrompt, String> {
            Ok(RenderedPrompt {
                system: "w ".repeat(self.0),
                user: request.label.clone(),
            })
        }

        fn contract(&self, request: &ContractRequest) -> Value {
            candidate_contract(request)
        }

        fn parse(&self, reply: &Value) -> Result<ParsedReply, String> {
            parse_candidate_reply(reply)
        }
    }

    #[test]
    fn render_labels_the_instance_with_the_id() {
        assert_eq!(render(&Words(1), "words", false).user, "words #1");
        assert!(!prompt_request("words", false).tools_available);
    }

    #[test]
    fn the_word_budget_passes_at_the_limit_and_fails_above_it() {
        assert_system_prompt_fits_a_small_model(&Words(MAX_SYSTEM_PROMPT_WORDS), "words");
        let over = std::panic::catch_unwind(|| {
            assert_system_prompt_fits_a_small_model(&Words(MAX_SYSTEM_PROMPT_WORDS + 1), "words")
        });
        assert!(over.is_err());
    }

    #[test]
    fn reply_checks_tell_the_contract_kinds_apart() {
        assert_describes_itself(&Words(1), "words", "1.0.0", Role::Reviewer);
        assert_parses_a_contract_reply(&Words(1), ReplyKind::Candidates);
        let wrong = std::panic::catch_unwind(|| {
            assert_parses_a_contract_reply(&Words(1), ReplyKind::Decisions)
        });
        assert!(wrong.is_err());
    }

    impl Specialist for SecurityOnly {
        fn describe(&self) -> Descriptor {
            Words(1).describe()
        }

        fn render_prompt(&self, request: &PromptRequest) -> Result<RenderedPrompt, String> {
            Words(1).render_prompt(request)
        }

        fn contract(&self, request: &ContractRequest) -> Value {
            crate::render::single_area_contract(request, Area::Security)
        }

        fn parse(&self, reply: &Value) -> Result<ParsedReply, String> {
            crate::render::parse_single_area_reply(reply, Area::Security, "security only")
        }
    }

    #[test]
    fn the_single_area_check_fails_for_a_specialist_with_every_area() {
        assert_reports_only_in_area(&SecurityOnly, Area::Security, Area::Correctness);
        let all_areas = std::panic::catch_unwind(|| {
            assert_reports_only_in_area(&Words(1), Area::Security, Area::Correctness)
        });
        assert!(all_areas.is_err());
    }
}
