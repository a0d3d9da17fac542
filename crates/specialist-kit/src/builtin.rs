//! A specialist as a table of settings: what each built-in plugin is besides its prompt
//! text.
//!
//! Every built-in renders its prompt the same way (a system prompt of its role text and
//! the shared blocks of [`render`], a user prompt of [`render::user_prompt`]), declares
//! one of the standard contracts and parses replies with its parser. What differs is
//! data: the descriptor, the role text, which system prompt, which optional user blocks,
//! the task, what a request must carry, and the contract. [`Settings`] holds that data
//! and implements the four [`Specialist`](vouch_abi::Specialist) methods from it;
//! [`builtin_specialist!`](crate::builtin_specialist) declares the plugin's type,
//! `ID`, `VERSION` and `SETTINGS` from one table and exports it across the C ABI with
//! [`vouch_abi::export_specialist!`].

pub use serde_json::Value;
use vouch_abi::{
    Area, ContractRequest, Descriptor, PAYLOAD_VERSION, ParsedReply, PromptRequest, RenderedPrompt,
    Role,
};

use crate::contract::{
    candidate_contract, parse_candidate_reply, parse_verifier_reply, verifier_contract,
};
use crate::render::{self, Blocks};

/// Which system prompt a specialist renders around its role text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemPrompt {
    /// [`render::review_area_system_prompt`]: the role text, the tools note, the review
    /// area table, the defect boundary and the candidate format.
    ReviewAreas,
    /// [`render::bounded_system_prompt`]: the role text, the tools note, this boundary
    /// and the candidate format.
    Bounded(&'static str),
    /// The role text, the tools note, [`render::REPORTING_BOUNDARY`] and this further
    /// boundary: the verifier's prompt, which proposes nothing.
    Reporting(&'static str),
}

/// What a request must carry for the specialist to render a prompt for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Any request.
    Nothing,
    /// A detected intent: the host runs the role only when it detected one.
    Intent,
    /// At least one candidate to decide.
    Candidates,
}

/// The task under `## Task` in the user prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// The same task for every request.
    Always(&'static str),
    /// `with` when the request has an intent, `without` when it has none.
    ByIntent {
        /// The task of a request with an intent.
        with: &'static str,
        /// The task of a request without one.
        without: &'static str,
    },
}

/// Which standard contract the specialist's final answer follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// [`candidate_contract`] and [`parse_candidate_reply`].
    Candidates,
    /// Candidates in one review area only: [`render::single_area_contract`] and
    /// [`render::parse_single_area_reply`] with the reason a reply in another area is
    /// refused.
    OneArea(Area, &'static str),
    /// [`verifier_contract`] and [`parse_verifier_reply`].
    Decisions,
}

/// A built-in specialist's settings. Every field is explicit: a table a reader checks
/// against the plugin's prompt text in one screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Stable id, also the base of the export symbol.
    pub id: &'static str,
    /// The plugin's version, pinned by manifests.
    pub version: &'static str,
    /// The role it plays.
    pub role: Role,
    /// One sentence for humans.
    pub description: &'static str,
    /// What a request must carry.
    pub needs: Needs,
    /// The role text that opens the system prompt.
    pub role_text: &'static str,
    /// The system prompt around it.
    pub system: SystemPrompt,
    /// The optional blocks of the user prompt.
    pub blocks: Blocks,
    /// The task.
    pub task: Task,
    /// The contract and its parser.
    pub reply: Reply,
}

impl Settings {
    /// The descriptor: id, version, role, this crate's [`PAYLOAD_VERSION`], description.
    pub fn describe(&self) -> Descriptor {
        Descriptor {
            id: self.id.into(),
            version: self.version.into(),
            role: self.role,
            payload_version: PAYLOAD_VERSION,
            description: self.description.into(),
        }
    }

    /// The system and user prompt for `request`.
    ///
    /// # Errors
    /// [`Settings::refusal`] when the request lacks what the specialist needs.
    pub fn render_prompt(&self, request: &PromptRequest) -> Result<RenderedPrompt, String> {
        if let Some(refusal) = self.refusal(request) {
            return Err(refusal);
        }
        let tools = request.tools_available;
        let system = match self.system {
            SystemPrompt::ReviewAreas => render::review_area_system_prompt(self.role_text, tools),
            SystemPrompt::Bounded(boundary) => {
                render::bounded_system_prompt(self.role_text, tools, boundary)
            }
            SystemPrompt::Reporting(boundary) => render::system_prompt(&[
                self.role_text,
                render::tools_note(tools),
                render::REPORTING_BOUNDARY,
                boundary,
            ]),
        };
        let user = render::user_prompt(request, self.blocks, self.task_for(request));
        Ok(RenderedPrompt { system, user })
    }

    /// Why the specialist refuses `request`, or `None`: a role that needs an intent
    /// refuses a request without one, the verifier refuses an empty batch.
    pub fn refusal(&self, request: &PromptRequest) -> Option<String> {
        let id = self.id;
        match self.needs {
            Needs::Intent if request.intent.is_none() => Some(format!(
                "{id} needs the change's intent; the host runs it only when intent was detected"
            )),
            Needs::Candidates if request.candidates.is_empty() => {
                Some(format!("{id} needs at least one candidate to decide"))
            }
            Needs::Nothing | Needs::Intent | Needs::Candidates => None,
        }
    }

    /// The task for `request`: a [`Task::ByIntent`] task depends on whether the request
    /// has an intent.
    pub fn task_for(&self, request: &PromptRequest) -> &'static str {
        match self.task {
            Task::Always(task) => task,
            Task::ByIntent { with, without } => {
                if request.intent.is_some() {
                    with
                } else {
                    without
                }
            }
        }
    }

    /// The output contract for `request`.
    pub fn contract(&self, request: &ContractRequest) -> Value {
        match self.reply {
            Reply::Candidates => candidate_contract(request),
            Reply::OneArea(area, _) => render::single_area_contract(request, area),
            Reply::Decisions => verifier_contract(request),
        }
    }

    /// Parses `reply` with the contract's parser.
    ///
    /// # Errors
    /// The parser's message.
    pub fn parse(&self, reply: &Value) -> Result<ParsedReply, String> {
        match self.reply {
            Reply::Candidates => parse_candidate_reply(reply),
            Reply::OneArea(area, reason) => render::parse_single_area_reply(reply, area, reason),
            Reply::Decisions => parse_verifier_reply(reply),
        }
    }
}

/// Declares a built-in specialist from its settings: a stateless unit struct `$ty`
/// (with the given docs), `pub const SETTINGS`, `ID` and `VERSION`, the
/// [`Specialist`](vouch_abi::Specialist) implementation that reads `SETTINGS`, and the
/// C-ABI export `vouch_plugin_<$symbol>` by [`vouch_abi::export_specialist!`].
///
/// ```text
/// vouch_specialist_kit::builtin_specialist! {
///     /// The bug-review panel reviewer. Stateless; one value serves every instance.
///     BugReview as bug_review,
///     Settings { id: "bug-review", version: "1.0.0", /* … */ }
/// }
/// ```
#[macro_export]
macro_rules! builtin_specialist {
    ($(#[$doc:meta])* $ty:ident as $symbol:ident, $settings:expr $(,)?) => {
        $(#[$doc])*
        #[derive(Debug, Default, Clone, Copy)]
        pub struct $ty;

        /// This specialist's settings: everything it is besides its prompt text.
        pub const SETTINGS: $crate::builtin::Settings = $settings;
        /// Plugin id (also the base of the export symbol).
        pub const ID: &str = SETTINGS.id;
        /// Plugin version, pinned by manifests.
        pub const VERSION: &str = SETTINGS.version;

        impl $crate::abi::Specialist for $ty {
            fn describe(&self) -> $crate::abi::Descriptor {
                SETTINGS.describe()
            }

            fn render_prompt(
                &self,
                request: &$crate::abi::PromptRequest,
            ) -> ::core::result::Result<$crate::abi::RenderedPrompt, ::std::string::String> {
                SETTINGS.render_prompt(request)
            }

            fn contract(&self, request: &$crate::abi::ContractRequest) -> $crate::builtin::Value {
                SETTINGS.contract(request)
            }

            fn parse(
                &self,
                reply: &$crate::builtin::Value,
            ) -> ::core::result::Result<$crate::abi::ParsedReply, ::std::string::String> {
                SETTINGS.parse(reply)
            }
        }

        $crate::abi::export_specialist!($symbol, $ty);
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample;

    const SETTINGS: Settings = Settings {
        id: "probe",
        version: "1.0.0",
        role: Role::Reviewer,
        description: "A probe.",
        needs: Needs::Nothing,
        role_text: "You are the probe.",
        system: SystemPrompt::ReviewAreas,
        blocks: Blocks::NONE,
        task: Task::ByIntent {
            with: "Check the objective.",
            without: "There is no objective.",
        },
        reply: Reply::Candidates,
    };

    #[test]
    fn a_request_is_refused_only_when_it_lacks_what_the_role_needs() {
        let full = sample::prompt_request();
        assert!(full.intent.is_some() && !full.candidates.is_empty());
        let no_intent = PromptRequest {
            intent: None,
            ..full.clone()
        };
        let no_candidates = PromptRequest {
            candidates: vec![],
            ..full.clone()
        };
        for (needs, request, refused) in [
            (Needs::Nothing, &no_intent, None),
            (Needs::Nothing, &no_candidates, None),
            (Needs::Intent, &full, None),
            (Needs::Intent, &no_candidates, None),
            (
                Needs::Intent,
                &no_intent,
                Some("probe needs the change's intent"),
            ),
            (Needs::Candidates, &full, None),
            (Needs::Candidates, &no_intent, None),
            (
                Needs::Candidates,
                &no_candidates,
                Some("probe needs at least one candidate"),
            ),
        ] {
            let settings = Settings { needs, ..SETTINGS };
            let refusal = settings.refusal(request);
            match refused {
                None => assert_eq!(refusal, None, "{needs:?}"),
                Some(start) => assert!(refusal.unwrap().starts_with(start), "{needs:?}"),
            }
            assert_eq!(
                settings.render_prompt(request).err(),
                settings.refusal(request)
            );
        }
    }

    #[test]
    fn the_task_follows_the_intent_only_when_it_depends_on_it() {
        let with = sample::prompt_request();
        let without = PromptRequest {
            intent: None,
            ..with.clone()
        };
        for (task, request, expected) in [
            (SETTINGS.task, &with, "Check the objective."),
            (SETTINGS.task, &without, "There is no objective."),
            (Task::Always("Review."), &with, "Review."),
            (Task::Always("Review."), &without, "Review."),
        ] {
            let settings = Settings { task, ..SETTINGS };
            assert_eq!(settings.task_for(request), expected);
            let prompt = settings.render_prompt(request).unwrap();
            assert!(prompt.user.contains(&format!("## Task\n{expected}\n")));
        }
    }

    #[test]
    fn each_reply_kind_declares_and_parses_its_own_contract() {
        let request = sample::contract_request();
        let one_area = Reply::OneArea(Area::Conventions, "conventions only");
        for (reply, contract) in [
            (Reply::Candidates, candidate_contract(&request)),
            (
                one_area,
                render::single_area_contract(&request, Area::Conventions),
            ),
            (Reply::Decisions, verifier_contract(&request)),
        ] {
            let settings = Settings { reply, ..SETTINGS };
            assert_eq!(settings.contract(&request), contract, "{reply:?}");
        }
        let candidates = sample::empty_candidate_reply();
        let decisions = sample::decision_reply();
        for (reply, value, parses) in [
            (Reply::Candidates, &candidates, true),
            (Reply::Candidates, &decisions, false),
            (one_area, &candidates, true),
            (Reply::Decisions, &decisions, true),
            (Reply::Decisions, &candidates, false),
        ] {
            let settings = Settings { reply, ..SETTINGS };
            assert_eq!(settings.parse(value).is_ok(), parses, "{reply:?}");
        }
    }
}
