//! What to create, update, resolve or leave on a pull request: a pure function of what
//! the report asks for ([`Composed`]) and what the pull request already carries.

use crate::compose::{Composed, DesiredInline, is_summary, resolved_body, summary_head};

/// A comment vouch posted earlier that carries the summary marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExistingSummary {
    /// The forge's comment id.
    pub id: String,
    /// Its current body.
    pub body: String,
}

/// An inline comment vouch posted earlier (found by its finding marker).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExistingInline {
    /// The id to act on: the comment (GitHub, Gitea) or the discussion (GitLab).
    pub id: String,
    /// The finding key in its marker.
    pub key: String,
    /// Its current body.
    pub body: String,
    /// Already resolved (GitLab, Gitea) or marked resolved (GitHub).
    pub resolved: bool,
}

/// What the pull request carries now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Existing {
    /// Comments with the summary marker, oldest first.
    pub summaries: Vec<ExistingSummary>,
    /// vouch's inline comments, oldest first.
    pub inline: Vec<ExistingInline>,
}

/// The summary comment's action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummaryAction {
    /// No summary yet: post one.
    Create {
        /// Body.
        body: String,
    },
    /// Replace the body of the existing summary.
    Update {
        /// Comment id.
        id: String,
        /// New body.
        body: String,
    },
    /// The existing summary already says this.
    Unchanged {
        /// Comment id.
        id: String,
    },
}

/// One inline comment's action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InlineAction {
    /// Post a new inline comment.
    Create(DesiredInline),
    /// The finding is still reported and its comment is open: leave it.
    Keep {
        /// Comment or discussion id.
        id: String,
    },
    /// The finding is gone from a completed review: resolve (or mark) its comment.
    Resolve {
        /// Comment or discussion id.
        id: String,
        /// The marked body (forges that cannot resolve through their API edit the body).
        body: String,
    },
    /// A resolved comment's finding is reported again: reopen it.
    Reopen {
        /// Comment or discussion id.
        id: String,
        /// The fresh body.
        body: String,
    },
}

/// Everything one publish does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Inline actions, in the order the report lists findings, then existing comments.
    pub inline: Vec<InlineAction>,
    /// The summary, executed last so it reflects what was done.
    pub summary: SummaryAction,
}

impl Plan {
    /// Counts of (created, kept, resolved, reopened) inline comments.
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        let mut c = (0, 0, 0, 0);
        for a in &self.inline {
            match a {
                InlineAction::Create(_) => c.0 += 1,
                InlineAction::Keep { .. } => c.1 += 1,
                InlineAction::Resolve { .. } => c.2 += 1,
                InlineAction::Reopen { .. } => c.3 += 1,
            }
        }
        c
    }
}

/// Rule (publishing, re-runs): the summary is the oldest comment carrying the summary
/// marker, updated in place only when its body differs, else created. Each inline comment
/// the report asks for is created unless a comment with its finding key exists (kept, or
/// reopened when resolved). An existing comment whose finding the report no longer has is
/// resolved only when the review completed and the comment is still open; a finding that
/// is still reported (for example now outside the diff) keeps its comment; an incomplete
/// review touches no inline comment. Nothing is ever posted twice for one key.
pub fn plan(composed: &Composed, existing: &Existing, reviewed_head: &str) -> Plan {
    // A review of an earlier head never replaces the summary of the current one.
    let newer = |body: &str| {
        composed
            .stale_for
            .as_deref()
            .is_some_and(|pr_head| summary_head(body) == Some(pr_head))
    };
    let summary = match existing.summaries.iter().find(|s| is_summary(&s.body)) {
        Some(s) if s.body == composed.summary || newer(&s.body) => {
            SummaryAction::Unchanged { id: s.id.clone() }
        }
        Some(s) => SummaryAction::Update {
            id: s.id.clone(),
            body: composed.summary.clone(),
        },
        None => SummaryAction::Create {
            body: composed.summary.clone(),
        },
    };
    let mut inline = Vec::new();
    let mut matched = std::collections::BTreeSet::new();
    let mut planned_keys = std::collections::BTreeSet::new();
    for want in &composed.inline {
        if !planned_keys.insert(want.key.clone()) {
            continue;
        }
        match existing.inline.iter().find(|e| e.key == want.key) {
            Some(e) => {
                matched.insert(e.id.clone());
                inline.push(if e.resolved {
                    InlineAction::Reopen {
                        id: e.id.clone(),
                        body: want.body.clone(),
                    }
                } else {
                    InlineAction::Keep { id: e.id.clone() }
                });
            }
            None => inline.push(InlineAction::Create(want.clone())),
        }
    }
    for e in existing.inline.iter().filter(|e| !matched.contains(&e.id)) {
        let gone = !composed.reported_keys.contains(&e.key);
        // Only a review of the whole pull request as it is says a finding is gone.
        let whole =
            composed.stale_for.is_none() && composed.uncovered.is_empty() && !composed.other_range;
        if gone && composed.completed && whole && !e.resolved {
            inline.push(InlineAction::Resolve {
                id: e.id.clone(),
                body: resolved_body(&e.key, &e.body, reviewed_head),
            });
        } else if !e.resolved {
            inline.push(InlineAction::Keep { id: e.id.clone() });
        }
    }
    Plan { inline, summary }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::compose::{SUMMARY_MARKER, finding_marker};

    fn want(key: &str) -> DesiredInline {
        DesiredInline {
            key: key.into(),
            path: "src/a.rs".into(),
            old_path: "src/a.rs".into(),
            start_line: 3,
            line: 4,
            old_line: None,
            body: format!("{} new {key}", finding_marker(key)),
        }
    }

    fn have(id: &str, key: &str, resolved: bool) -> ExistingInline {
        ExistingInline {
            id: id.into(),
            key: key.into(),
            body: format!("{} old {key}", finding_marker(key)),
            resolved,
        }
    }

    fn composed(inline: &[&str], reported: &[&str], completed: bool) -> Composed {
        Composed {
            summary: format!("{SUMMARY_MARKER}\nnow"),
            inline: inline.iter().map(|k| want(k)).collect(),
            reported_keys: reported
                .iter()
                .map(|k| k.to_string())
                .collect::<BTreeSet<_>>(),
            completed,
            stale_for: None,
            uncovered: vec![],
            other_range: false,
        }
    }

    /// A review of an earlier head (the pull request's head is now `beef`) replaces no
    /// summary of the current head and resolves no comment; it replaces a summary of
    /// another earlier head, or one that states no head.
    #[test]
    fn a_review_of_an_earlier_head_replaces_no_newer_summary_and_resolves_nothing() {
        use crate::compose::HEAD_MARKER_PREFIX;
        let mut c = composed(&[], &[], true);
        c.stale_for = Some("beef".into());
        let summary = |id: &str, head: &str| ExistingSummary {
            id: id.into(),
            body: format!("{SUMMARY_MARKER}\n{HEAD_MARKER_PREFIX}{head} -->\nold"),
        };
        // (existing summary, action)
        let cases = [
            (
                summary("9", "beef"),
                SummaryAction::Unchanged { id: "9".into() },
            ),
            (
                summary("9", "0ld0"),
                SummaryAction::Update {
                    id: "9".into(),
                    body: c.summary.clone(),
                },
            ),
            (
                ExistingSummary {
                    id: "9".into(),
                    body: format!("{SUMMARY_MARKER}\nold"),
                },
                SummaryAction::Update {
                    id: "9".into(),
                    body: c.summary.clone(),
                },
            ),
        ];
        for (existing, want) in cases {
            let p = plan(
                &c,
                &Existing {
                    summaries: vec![existing.clone()],
                    inline: vec![have("1", "gone", false)],
                },
                "f00d",
            );
            assert_eq!(p.summary, want, "{existing:?}");
            assert_eq!(short(&p), ["K(1)"], "nothing is resolved");
        }
        // Nor does a review of part of the pull request (files outside its range).
        let mut part = composed(&[], &[], true);
        part.uncovered = vec!["src/evil.py".into()];
        let p = plan(
            &part,
            &Existing {
                summaries: vec![],
                inline: vec![have("1", "gone", false)],
            },
            "f00d",
        );
        assert_eq!(short(&p), ["K(1)"], "nothing is resolved");
    }

    /// Short names for the table: C(key), K(id), R(id), O(id).
    fn short(plan: &Plan) -> Vec<String> {
        plan.inline
            .iter()
            .map(|a| match a {
                InlineAction::Create(d) => format!("C({})", d.key),
                InlineAction::Keep { id } => format!("K({id})"),
                InlineAction::Resolve { id, .. } => format!("R({id})"),
                InlineAction::Reopen { id, .. } => format!("O({id})"),
            })
            .collect()
    }

    #[test]
    fn inline_actions_table() {
        let a = "aaaaaaaaaaaaaaaa";
        let b = "bbbbbbbbbbbbbbbb";
        let c = "cccccccccccccccc";
        #[allow(clippy::type_complexity)]
        let cases: Vec<(&str, Composed, Vec<ExistingInline>, Vec<String>)> = vec![
            (
                "first run creates every inline comment",
                composed(&[a, b], &[a, b], true),
                vec![],
                vec![format!("C({a})"), format!("C({b})")],
            ),
            (
                "re-run keeps what exists, no duplicate",
                composed(&[a, b], &[a, b], true),
                vec![have("1", a, false), have("2", b, false)],
                vec!["K(1)".into(), "K(2)".into()],
            ),
            (
                "a finding gone from a completed review is resolved",
                composed(&[a], &[a], true),
                vec![have("1", a, false), have("2", b, false)],
                vec!["K(1)".into(), "R(2)".into()],
            ),
            (
                "an incomplete review resolves nothing",
                composed(&[], &[], false),
                vec![have("1", a, false)],
                vec!["K(1)".into()],
            ),
            (
                "an already resolved comment is not resolved twice",
                composed(&[], &[], true),
                vec![have("1", a, true)],
                vec![],
            ),
            (
                "a resolved finding reported again is reopened",
                composed(&[a], &[a], true),
                vec![have("1", a, true)],
                vec!["O(1)".into()],
            ),
            (
                "a finding still reported but now outside the diff keeps its comment",
                composed(&[], &[c], true),
                vec![have("3", c, false)],
                vec!["K(3)".into()],
            ),
            (
                "one key asked twice is created once",
                composed(&[a, a], &[a], true),
                vec![],
                vec![format!("C({a})")],
            ),
            (
                "duplicates left by a past race: first matched, the other kept",
                composed(&[a], &[a], true),
                vec![have("1", a, false), have("2", a, false)],
                vec!["K(1)".into(), "K(2)".into()],
            ),
        ];
        for (name, composed, inline, expected) in cases {
            let p = plan(
                &composed,
                &Existing {
                    summaries: vec![],
                    inline,
                },
                "f00d",
            );
            assert_eq!(short(&p), expected, "{name}");
        }
    }

    #[test]
    fn summary_actions_table() {
        let c = composed(&[], &[], true);
        let s = |id: &str, body: &str| ExistingSummary {
            id: id.into(),
            body: body.into(),
        };
        let cases = vec![
            (
                "no summary yet: create",
                vec![],
                SummaryAction::Create {
                    body: c.summary.clone(),
                },
            ),
            (
                "a summary exists: update in place",
                vec![s("9", &format!("{SUMMARY_MARKER}\nold"))],
                SummaryAction::Update {
                    id: "9".into(),
                    body: c.summary.clone(),
                },
            ),
            (
                "same body: no request",
                vec![s("9", &c.summary)],
                SummaryAction::Unchanged { id: "9".into() },
            ),
            (
                "the oldest marked comment wins",
                vec![
                    s("1", "unrelated"),
                    s("4", &format!("{SUMMARY_MARKER} a")),
                    s("5", &format!("{SUMMARY_MARKER} b")),
                ],
                SummaryAction::Update {
                    id: "4".into(),
                    body: c.summary.clone(),
                },
            ),
            (
                "a comment that only quotes the marker is not the summary",
                vec![
                    s("2", &format!("> quoting the bot: {SUMMARY_MARKER}")),
                    s("3", &format!("{SUMMARY_MARKER}\nold")),
                ],
                SummaryAction::Update {
                    id: "3".into(),
                    body: c.summary.clone(),
                },
            ),
        ];
        for (name, summaries, expected) in cases {
            let p = plan(
                &c,
                &Existing {
                    summaries,
                    inline: vec![],
                },
                "f00d",
            );
            assert_eq!(p.summary, expected, "{name}");
        }
    }

    #[test]
    fn resolved_body_keeps_the_marker_and_the_old_text() {
        let key = "aaaaaaaaaaaaaaaa";
        let p = plan(
            &composed(&[], &[], true),
            &Existing {
                summaries: vec![],
                inline: vec![have("1", key, false)],
            },
            "0123456789abcdef",
        );
        let InlineAction::Resolve { body, .. } = &p.inline[0] else {
            panic!("{p:?}")
        };
        assert_eq!(crate::compose::marker_key(body).as_deref(), Some(key));
        assert!(body.contains(crate::compose::RESOLVED_MARKER));
        assert!(
            body.contains("old aaaaaaaaaaaaaaaa") && body.contains("`0123456789ab`"),
            "{body}"
        );
    }
}
