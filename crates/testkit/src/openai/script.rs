//! Scripts: ordered rules, each a matcher with a queue of replies.

use std::collections::VecDeque;

use serde_json::Value;

use super::matcher::Match;
use super::reply::Reply;

/// One rule of a [`Script`]: a matcher, an optional label, a queue of replies served
/// in order (one per matching request) and an optional reply repeated forever once
/// the queue is empty.
#[derive(Clone, Debug)]
pub struct Rule {
    pub(crate) matcher: Match,
    pub(crate) label: Option<String>,
    pub(crate) replies: VecDeque<Reply>,
    pub(crate) always: Option<Reply>,
}

impl Rule {
    /// A rule with `matcher` and no replies yet.
    pub fn when(matcher: Match) -> Self {
        Rule {
            matcher,
            label: None,
            replies: VecDeque::new(),
            always: None,
        }
    }

    /// Names the rule; the name is recorded with each request it serves.
    pub fn named(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Appends one reply to the queue.
    pub fn reply(mut self, reply: Reply) -> Self {
        self.replies.push_back(reply);
        self
    }

    /// Appends several replies to the queue, in order.
    pub fn replies(mut self, replies: impl IntoIterator<Item = Reply>) -> Self {
        self.replies.extend(replies);
        self
    }

    /// Serves `reply` to every matching request once the queue is empty, so the rule
    /// never runs out.
    pub fn always(mut self, reply: Reply) -> Self {
        self.always = Some(reply);
        self
    }

    /// Whether the rule can still serve a request.
    pub(crate) fn has_reply(&self) -> bool {
        !self.replies.is_empty() || self.always.is_some()
    }

    /// Takes the next reply (queue first, then the repeated one).
    pub(crate) fn take_reply(&mut self) -> Option<Reply> {
        self.replies.pop_front().or_else(|| self.always.clone())
    }
}

/// An ordered list of [`Rule`]s. A request is served by the first rule (in the order
/// added) that matches it and still has a reply.
#[derive(Clone, Debug, Default)]
pub struct Script {
    pub(crate) rules: Vec<Rule>,
    pub(crate) models_reply: Option<Reply>,
    pub(crate) context_window: Option<u32>,
}

impl Script {
    /// An empty script (every chat request is unmatched).
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `rule`.
    pub fn rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Appends an unnamed rule with `matcher` and the queue `replies`.
    pub fn on(self, matcher: Match, replies: impl IntoIterator<Item = Reply>) -> Self {
        self.rule(Rule::when(matcher).replies(replies))
    }

    /// Answers every `GET …/models` with `reply` instead of the model list (e.g. a 429
    /// or a 500 for the endpoint check).
    pub fn models_reply(mut self, reply: Reply) -> Self {
        self.models_reply = Some(reply);
        self
    }

    /// The model's context window, in tokens, which the dialect states where its
    /// provider does: vLLM's `max_model_len` and OpenRouter's `context_length` in the
    /// model list, llama.cpp's `default_generation_settings.n_ctx` from `/props`. Without
    /// it, no dialect states a window (as servers that do not say).
    pub fn context_window(mut self, tokens: u32) -> Self {
        self.context_window = Some(tokens);
        self
    }

    /// Picks the rule serving `body`: its index and the reply taken from it.
    pub(crate) fn serve(&mut self, body: &Value) -> Option<(usize, Option<String>, Reply)> {
        let (index, rule) = self
            .rules
            .iter_mut()
            .enumerate()
            .find(|(_, rule)| rule.has_reply() && rule.matcher.matches(body))?;
        let reply = rule.take_reply()?;
        Some((index, rule.label.clone(), reply))
    }
}
