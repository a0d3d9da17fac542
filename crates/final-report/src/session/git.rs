//! git commands and tool calls in the session model: HEADs, pending mutations,
//! worktrees and clones.

use super::*;

impl Session {
    /// HEAD and pending-mutation effects of one git command in `dir`.
    pub(super) fn git_effects(
        &mut self,
        seq: u64,
        args: &[&str],
        dir: Option<&str>,
        exit_code: Option<i64>,
    ) {
        let (sub, rest) = classify::git_subcommand(args);
        let positional: Vec<&str> = rest
            .iter()
            .copied()
            .filter(|a| !a.starts_with('-'))
            .collect();
        let has = |f: &str| rest.contains(&f);
        let Some(dir) = dir else {
            return;
        };
        let what = format!("`git {}`", args.join(" "));
        match sub {
            // A removed worktree stays known: commands that ran there still did.
            "worktree" if positional.first() == Some(&"add") => {
                self.git_worktree_add(&rest[1..], dir)
            }
            "clone" => self.git_clone(rest, dir),
            "checkout" | "switch" => self.git_checkout(seq, rest, dir, what),
            "reset" if has("--hard") || has("--merge") || has("--keep") => {
                self.git_hard_reset(positional.first().copied(), dir)
            }
            "merge" | "rebase" | "cherry-pick" | "revert" | "am"
                if has("--abort") || has("--quit") =>
            {
                self.state(dir).pending.retain(|p| p.committed);
            }
            "merge" | "pull" => {
                let committed =
                    !(has("--no-commit") || has("--squash")) && exit_code.is_none_or(|c| c == 0);
                self.pend(dir, seq, what, committed);
            }
            "rebase" | "cherry-pick" | "revert" | "am" | "commit" => {
                self.pend(dir, seq, what, true)
            }
            "stash" => match positional.first().copied() {
                Some("pop" | "apply") => self.pend(dir, seq, what, false),
                Some("list" | "show") => {}
                _ => self.state(dir).pending.retain(|p| p.committed),
            },
            "restore" | "rm" | "mv" | "clean" | "apply" | "add" => self.pend(dir, seq, what, false),
            "rev-parse" if positional.first() == Some(&"HEAD") => self.git_rev_parse_head(seq, dir),
            _ => {}
        }
    }

    /// Records `what` as a pending mutation in `dir`, committed or not.
    fn pend(&mut self, dir: &str, seq: u64, what: String, committed: bool) {
        self.state(dir).pending.push(Pending {
            seq,
            what,
            committed,
        });
    }

    /// `git worktree add` (its arguments after `add`): the new path is an isolated dir,
    /// and `dir` becomes a main checkout unless it is itself isolated.
    fn git_worktree_add(&mut self, args: &[&str], dir: &str) {
        let values = values_skipping_flags(args, &["-b", "-B", "--reason"]);
        let Some(path) = values.first().and_then(|p| resolve(Some(dir), p)) else {
            return;
        };
        let head = values.get(1).map(|h| (*h).to_owned());
        self.dirs.insert(
            path,
            DirState {
                head,
                pending: Vec::new(),
                isolated: true,
            },
        );
        if !self.main_dirs.iter().any(|d| d == dir) && self.place(dir) != Place::Isolated {
            self.main_dirs.push(dir.to_owned());
        }
    }

    /// `git clone`: its target directory (given, or named after the URL) is isolated.
    fn git_clone(&mut self, rest: &[&str], dir: &str) {
        let values = values_skipping_flags(rest, &["-b", "--branch", "--depth", "-o", "--origin"]);
        let target = values.get(1).map(|t| (*t).to_owned()).or_else(|| {
            values.first().map(|u| {
                u.trim_end_matches('/')
                    .rsplit('/')
                    .next()
                    .unwrap_or(u)
                    .trim_end_matches(".git")
                    .to_owned()
            })
        });
        if let Some(path) = target.and_then(|t| resolve(Some(dir), &t)) {
            self.dirs.insert(
                path,
                DirState {
                    head: None,
                    pending: Vec::new(),
                    isolated: true,
                },
            );
        }
    }

    /// `git checkout`/`switch`: paths after `--` are a pending edit; a target moves HEAD
    /// and drops what was pending.
    fn git_checkout(&mut self, seq: u64, rest: &[&str], dir: &str, what: String) {
        if let Some(dash) = rest.iter().position(|a| *a == "--") {
            if dash + 1 < rest.len() {
                self.pend(dir, seq, what, false);
            }
            return;
        }
        let target = values_skipping_flags(rest, &["-b", "-B", "-c", "-C", "--orphan"]);
        if let Some(t) = target.first() {
            let st = self.state(dir);
            st.head = Some((*t).to_owned());
            st.pending.clear();
        }
    }

    /// `git reset --hard/--merge/--keep` to `target`: which pending mutations survive,
    /// and whether HEAD moves to a named ref.
    fn git_hard_reset(&mut self, target: Option<&str>, dir: &str) {
        let st = self.state(dir);
        match target {
            None | Some("HEAD") => st.pending.retain(|p| p.committed),
            Some(t) if t.starts_with("HEAD") || t.starts_with("ORIG_HEAD") => st.pending.clear(),
            Some(t) => {
                st.head = Some(t.to_owned());
                st.pending.clear();
            }
        }
    }

    /// `git rev-parse HEAD`: a SHA in its output becomes `dir`'s known HEAD.
    fn git_rev_parse_head(&mut self, seq: u64, dir: &str) {
        if let Some(sha) = self
            .results
            .get(&seq)
            .and_then(result_text)
            .map(|o| o.trim().to_owned())
            .filter(|o| is_sha(o))
        {
            self.state(dir).head = Some(sha);
        }
    }

    /// One tool call.
    pub(super) fn tool(&mut self, seq: u64, name: &str, arguments: &Value, cwd: Option<&str>) {
        let Some(effect) = classify::classify_tool(name, arguments) else {
            return;
        };
        let local_git = classify::is_local_git_tool(name);
        let dir = if local_git {
            classify::tool_repo_dir(arguments).and_then(|d| resolve(cwd, d))
        } else {
            classify::tool_path(arguments).and_then(|p| resolve(cwd, p))
        };
        match effect {
            Effect::ConfigRead(class) => {
                self.config_reads.push(ConfigRead {
                    seq,
                    text: name.to_owned(),
                    class,
                    tool: true,
                });
                return;
            }
            Effect::Edit(_) => {
                if let Some(d) = dir.as_deref().and_then(parent) {
                    self.state(&d).pending.push(Pending {
                        seq,
                        what: format!("tool `{name}` wrote {}", dir.as_deref().unwrap_or("")),
                        committed: false,
                    });
                }
            }
            _ if local_git => {
                if let Some(d) = dir.as_deref() {
                    self.git_tool_effects(seq, name, &effect, arguments, d);
                }
            }
            _ => {}
        }
        self.push_action(seq, dir, Route::Tool, effect, name, Some(name));
    }

    pub(super) fn git_tool_effects(
        &mut self,
        seq: u64,
        name: &str,
        effect: &Effect,
        arguments: &Value,
        dir: &str,
    ) {
        let target = [
            "branch_name",
            "branch",
            "target",
            "revision",
            "ref",
            "commit",
            "sha",
        ]
        .iter()
        .find_map(|k| arguments.get(*k).and_then(Value::as_str))
        .map(str::to_owned);
        let checkout =
            name.to_lowercase().contains("checkout") || name.to_lowercase().contains("switch");
        let st = self.state(dir);
        let worktree_change = *effect == Effect::WORKTREE_CHANGE;
        match effect {
            Effect::WorktreeOrIndex(TreeChange::MergeRestore) => {
                if let Some(t) = target {
                    st.head = Some(t);
                    st.pending.clear();
                } else {
                    st.pending.retain(|p| p.committed);
                }
            }
            _ if worktree_change && checkout && target.is_some() => {
                st.head = target;
                st.pending.clear();
            }
            Effect::Merge
            | Effect::WorktreeOrIndex(TreeChange::Other)
            | Effect::RefUpdate(Refs::Local)
                if !name.contains("fetch") =>
            {
                st.pending.push(Pending {
                    seq,
                    what: format!("tool `{name}`"),
                    committed: !worktree_change,
                });
            }
            _ => {}
        }
    }
}

/// Positional values, skipping flags and the values of the listed flags.
pub(super) fn values_skipping_flags<'a>(args: &[&'a str], with_value: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
            continue;
        }
        if with_value.contains(a) {
            skip = true;
            continue;
        }
        if a.starts_with('-') {
            continue;
        }
        out.push(*a);
    }
    out
}
