//! What a command or tool call does to the world, as the rules read it: one typed
//! [`Effect`] per thing done, with the data the rules use (the paths an edit writes,
//! what a test run covers, which forge mutation).

use crate::model::MutationCategory;

/// One thing a command or tool call does. A command with no effect only reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Runs tests.
    TestRun {
        /// The runner, looked up through launchers (`npx jest` → `jest`).
        runner: String,
        /// What the run covers: the whole suite, one package, or a filtered subset.
        scope: Scope,
        /// The directory the runner is pointed at instead of its working directory
        /// (`--manifest-path`, `make -C`, `npm --prefix`), as written.
        dir: Option<String>,
    },
    /// A local `git merge` / `git pull` (including into the main checkout).
    Merge,
    /// Creates, edits or deletes files: the paths written, as written, where the
    /// command names them (redirect targets, the operands of an editing program).
    Edit(Vec<String>),
    /// Changes a worktree or the index.
    WorktreeOrIndex(TreeChange),
    /// Updates git refs, local ones or a remote's.
    RefUpdate(Refs),
    /// Reads local configuration or forge-client profiles/auth, of this class.
    ConfigRead(ConfigClass),
    /// Activates or changes a forge profile or credentials for the session.
    ProfileActivation,
    /// Changes state on the forge.
    ForgeMutation { kind: ForgeMutationKind },
}

/// What configuration material a read reads: the class of the first configuration
/// path the command or tool names (see `config_path_class`), or a query of
/// configuration that names none (`gh auth status`, `git config --get`, `env`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConfigClass {
    Credentials,
    ForgeClient,
    Agent,
    Git,
    EnvironmentFile,
    PackageRegistry,
    Profile,
    Home,
    Query,
}

impl ConfigClass {
    /// The class as messages name it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Credentials => "credentials",
            Self::ForgeClient => "forge-client configuration",
            Self::Agent => "agent configuration",
            Self::Git => "git configuration",
            Self::EnvironmentFile => "environment file",
            Self::PackageRegistry => "package-registry configuration",
            Self::Profile => "profile",
            Self::Home => "home configuration",
            Self::Query => "configuration/profile query",
        }
    }
}

impl std::fmt::Display for ConfigClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a worktree or the index changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TreeChange {
    /// `git worktree add|remove|move|prune`.
    AddRemoveWorktree,
    /// Restores a tree after a merge: `git merge --abort`, `git reset --hard|--merge`.
    MergeRestore,
    /// Any other change (checkout, switch, stash, add, rebase, ...).
    Other,
}

/// Whose refs a ref update changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refs {
    /// The repository's own (fetch, commit, branch, tag, update-ref).
    Local,
    /// A remote's: `git push`.
    Remote,
}

/// What a forge mutation changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ForgeMutationKind {
    /// Merges a pull request on the forge.
    Merge,
    /// Submits an approving review.
    Approval,
    /// Creates, submits or dismisses a review that does not approve.
    Review,
    /// Any other write (comments, labels, closing, API writes).
    Write,
}

impl Effect {
    pub(crate) const MERGE_RESTORE: Effect = Effect::WorktreeOrIndex(TreeChange::MergeRestore);
    pub(crate) const WORKTREE_CHANGE: Effect = Effect::WorktreeOrIndex(TreeChange::Other);
    pub(crate) const WORKTREE_ADD_REMOVE: Effect =
        Effect::WorktreeOrIndex(TreeChange::AddRemoveWorktree);
    pub(crate) const REF_UPDATE: Effect = Effect::RefUpdate(Refs::Local);
    pub(crate) const PUSH: Effect = Effect::RefUpdate(Refs::Remote);
    pub(crate) const FORGE_MERGE: Effect = Effect::ForgeMutation {
        kind: ForgeMutationKind::Merge,
    };
    pub(crate) const APPROVAL: Effect = Effect::ForgeMutation {
        kind: ForgeMutationKind::Approval,
    };
    pub(crate) const REVIEW: Effect = Effect::ForgeMutation {
        kind: ForgeMutationKind::Review,
    };
    pub(crate) const FORGE_WRITE: Effect = Effect::ForgeMutation {
        kind: ForgeMutationKind::Write,
    };
    /// A read of configuration that names no configuration path.
    pub(crate) const CONFIG_QUERY: Effect = Effect::ConfigRead(ConfigClass::Query);
    /// A file edit whose paths the command does not name.
    pub(crate) const EDIT: Effect = Effect::Edit(Vec::new());

    /// A forge review: approving or not.
    pub(crate) fn review(approve: bool) -> Effect {
        match approve {
            true => Effect::APPROVAL,
            false => Effect::REVIEW,
        }
    }

    /// Whether it is a test run.
    pub(crate) fn is_test_run(&self) -> bool {
        matches!(self, Effect::TestRun { .. })
    }

    /// Whether it is a file edit, whatever its paths.
    pub(crate) fn is_edit(&self) -> bool {
        matches!(self, Effect::Edit(_))
    }

    /// Whether it approves or merges: a forge merge or approval, or a local merge.
    pub(crate) fn approves_or_merges(&self) -> bool {
        matches!(
            self,
            Effect::Merge
                | Effect::ForgeMutation {
                    kind: ForgeMutationKind::Merge | ForgeMutationKind::Approval
                }
        )
    }

    /// Mutation categories that may record this effect; empty for non-mutations.
    pub(crate) fn categories(&self) -> &'static [MutationCategory] {
        use MutationCategory::*;
        match self {
            Effect::Edit(_) => &[FileEditsByReviewer, CleanupMutations],
            Effect::WorktreeOrIndex(_) => &[WorktreeIndexMutations, CleanupMutations],
            Effect::Merge => &[WorktreeIndexMutations, GitRefMutations],
            Effect::RefUpdate(Refs::Local) => &[GitRefMutations],
            Effect::RefUpdate(Refs::Remote) => {
                &[GitRefMutations, ExternalStateMutations, McpForgeMutations]
            }
            Effect::ForgeMutation { kind } => match kind {
                ForgeMutationKind::Approval | ForgeMutationKind::Review => &[ReviewMutations],
                ForgeMutationKind::Merge => &[MergeMutations],
                ForgeMutationKind::Write => {
                    &[McpForgeMutations, ExternalStateMutations, CleanupMutations]
                }
            },
            Effect::TestRun { .. } | Effect::ConfigRead(_) | Effect::ProfileActivation => &[],
        }
    }

    /// A short description for messages.
    pub(crate) fn describe(&self) -> String {
        match self {
            Effect::TestRun { runner, .. } => return format!("a `{runner}` test run"),
            Effect::Merge => "a local merge",
            Effect::Edit(_) => "a file edit",
            Effect::WorktreeOrIndex(TreeChange::MergeRestore) => "a merge abort/reset",
            Effect::WorktreeOrIndex(TreeChange::AddRemoveWorktree) => "a worktree add/remove",
            Effect::WorktreeOrIndex(TreeChange::Other) => "a worktree/index change",
            Effect::RefUpdate(Refs::Local) => "a git ref update",
            Effect::RefUpdate(Refs::Remote) => "a git push",
            Effect::ConfigRead(_) => "a local config/profile inspection",
            Effect::ProfileActivation => "a profile activation",
            Effect::ForgeMutation { kind } => match kind {
                ForgeMutationKind::Approval | ForgeMutationKind::Review => "a review mutation",
                ForgeMutationKind::Merge => "a merge",
                ForgeMutationKind::Write => "a forge mutation",
            },
        }
        .to_owned()
    }
}

/// Add `effect` to `effects` once: a second edit adds its paths to the first (each
/// path once), any other effect already there is not repeated.
pub(crate) fn add_effect(effects: &mut Vec<Effect>, effect: Effect) {
    if let Effect::Edit(paths) = &effect
        && let Some(Effect::Edit(known)) = effects.iter_mut().find(|e| e.is_edit())
    {
        for p in paths {
            if !known.contains(p) {
                known.push(p.clone());
            }
        }
        return;
    }
    if !effects.contains(&effect) {
        effects.push(effect);
    }
}

/// Where a filter came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FilterSource {
    /// The runner's own arguments.
    Argument,
    /// An environment variable the runner reads (`PYTEST_ADDOPTS`).
    Environment(String),
}

/// A name filter: the option (or word) that selects a subset, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TestFilter {
    pub option: String,
    pub source: FilterSource,
}

impl TestFilter {
    pub(crate) fn argument(option: &str) -> Self {
        Self {
            option: option.to_owned(),
            source: FilterSource::Argument,
        }
    }

    /// How the filter is named in messages.
    pub(crate) fn describe(&self) -> String {
        match &self.source {
            FilterSource::Argument => format!("the command filters by `{}`", self.option),
            FilterSource::Environment(var) => {
                format!("`{var}` makes the runner filter by `{}`", self.option)
            }
        }
    }
}

/// What one test run covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Everything the runner finds there.
    Whole,
    /// One package (`cargo test -p X`): the whole suite in a single-crate repository,
    /// a subset in a workspace.
    Package(String),
    /// A subset selected by name.
    Filtered(TestFilter),
}
