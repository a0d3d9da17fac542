//! The typed claims of the narrative: what a sentence claims ([`ClaimKind`]), about whom
//! ([`Subject`]) and how ([`Qualifier`]s), decided once by the grammar (`grammar.rs`)
//! and its context words (`context.rs`). The rules read only [`Claim::asserted`]
//! claims; a claim about another pull request, someone else, the past or a simulation
//! is kept as a value and becomes a warning, never a judged claim.

/// What a claim says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClaimKind {
    Merged,
    Approved,
    ReadyState,
    FullSuitePassed,
    IssueClosed,
    InventoryComplete,
    FailurePreExisting,
    IsolatedWorktreeOnly,
    StrictCompliance,
    BlockedOrStopped,
}

/// Which context decisions the grammar makes for a kind of claim; a decision it does
/// not make leaves the claim about this change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reads {
    /// Another change (named by number or `another PR`), an unknown one, and the past.
    pub change: bool,
    /// Someone else as the actor (`another reviewer`, `approved by @alice`).
    pub actor: bool,
    /// A simulation (`test-merged`, `scratch`, `aborted`).
    pub simulation: bool,
}

impl ClaimKind {
    /// The context decisions read for this kind: merges and approvals are acts (an
    /// actor, a change, a time), a ready state is a change's, and only a merge can be
    /// simulated. Test, issue, inventory and compliance claims are always this session's.
    pub(crate) const fn reads(self) -> Reads {
        let (change, actor, simulation) = match self {
            Self::Merged => (true, true, true),
            Self::Approved => (true, true, false),
            Self::ReadyState => (true, false, false),
            _ => (false, false, false),
        };
        Reads {
            change,
            actor,
            simulation,
        }
    }
}

/// Whom a claim is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Subject {
    /// The reviewed change, by this session.
    ThisChange,
    /// Another pull request: named by number (`PR #12`) or by words (`another PR`).
    OtherChange(Option<u64>),
    /// An act someone else did (`another reviewer merged it`, `approved by @alice`,
    /// `externally`).
    SomeoneElse,
    /// A pull request named by number while the report names no reviewed one: it may
    /// be this change, so the claim is judged as this change's (failing closed).
    Unknown(u64),
}

/// How a claim is qualified; a qualified claim is not asserted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Qualifier {
    /// A negating word before it in its clause or between its words, or the label of
    /// a line whose value denies it (`Merged: no`).
    Negated,
    /// A hedging word before it in its clause (`would`, `will be`, `ready to be`).
    Hedged,
    /// Placed before this session (`earlier`, `two weeks ago`, `last week`).
    Past,
    /// A merge simulation (`test-merged`, `scratch branch`, `aborted`).
    Simulated,
}

/// One claim of the narrative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Claim {
    pub kind: ClaimKind,
    pub subject: Subject,
    /// Its qualifiers, in [`Qualifier`] order, each once.
    pub qualifiers: Vec<Qualifier>,
    /// The id of the grammar row that matched.
    pub row: &'static str,
    /// The sentence it came from, trimmed.
    pub sentence: String,
    /// 0-based line of the narrative.
    pub line: usize,
}

impl Claim {
    fn has(&self, q: Qualifier) -> bool {
        self.qualifiers.contains(&q)
    }

    /// Whether the claim is made outright: neither negated nor hedged.
    pub(crate) fn stated(&self) -> bool {
        !self.has(Qualifier::Negated) && !self.has(Qualifier::Hedged)
    }

    /// Whether the sentence claims this of the reviewed change, now, for real: the
    /// claims the rules judge.
    pub(crate) fn asserted(&self) -> bool {
        let about_this = match self.subject {
            Subject::ThisChange | Subject::Unknown(_) => true,
            Subject::OtherChange(_) | Subject::SomeoneElse => false,
        };
        about_this && self.stated() && !self.has(Qualifier::Past) && !self.has(Qualifier::Simulated)
    }

    /// Why a stated claim is not judged as this change's: every reason, subject first
    /// (someone else, another pull request), then the past and a simulation. `None`
    /// for an asserted or a denied claim.
    pub(crate) fn set_aside_because(&self) -> Option<String> {
        if !self.stated() || self.asserted() {
            return None;
        }
        let subject = match self.subject {
            Subject::SomeoneElse => Some("it attributes the act to someone else".to_owned()),
            Subject::OtherChange(Some(n)) => {
                Some(format!("it names pull request #{n}, not the reviewed one"))
            }
            Subject::OtherChange(None) => Some("it is about another pull request".to_owned()),
            Subject::ThisChange | Subject::Unknown(_) => None,
        };
        let past = self
            .has(Qualifier::Past)
            .then(|| "it describes an earlier, historical merge".to_owned());
        let simulated = self
            .has(Qualifier::Simulated)
            .then(|| "it describes a merge simulation, not a merge of the pull request".to_owned());
        let reasons: Vec<String> = [subject, past, simulated].into_iter().flatten().collect();
        Some(reasons.join("; "))
    }
}

/// What the narrative is about: the reviewed pull request's number, when the report
/// names one.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Reviewed {
    pub pull_request: Option<u64>,
}
