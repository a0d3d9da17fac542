//! Shell commands in the session model: the directory each simple command acts on
//! (`cwd`, `cd`, `pushd`/`popd`, `git -C`), and what it does there.

use super::*;

impl Session {
    /// One command entry; returns the working directory after it.
    pub(super) fn command(
        &mut self,
        seq: u64,
        line: &str,
        cwd: Option<String>,
        stack: &mut Vec<Option<String>>,
    ) -> Option<String> {
        let text = classify::normalize(line);
        if let Some(start) = &cwd {
            self.command_dirs.insert(seq, start.clone());
        }
        let mut here = cwd;
        let mut moved = false;
        let exit_code = self
            .results
            .get(&seq)
            .and_then(|r| r.get("exitCode"))
            .and_then(Value::as_i64);
        for simple in classify::split_shell(line) {
            let words: Vec<&str> = simple.words.iter().map(String::as_str).collect();
            match words.first().copied() {
                Some("cd") => {
                    here = resolve(here.as_deref(), words.get(1).copied().unwrap_or("~"));
                    moved = true;
                    continue;
                }
                Some("pushd") => {
                    stack.push(here.clone());
                    here = resolve(here.as_deref(), words.get(1).copied().unwrap_or("~"));
                    moved = true;
                    continue;
                }
                Some("popd") => {
                    here = stack.pop().flatten();
                    continue;
                }
                _ => {}
            }
            let git_c = git_c_dir(&words).map(|d| resolve(here.as_deref(), d));
            let (dir, route) = match git_c {
                Some(d) => (d, Route::GitC),
                None if moved => (here.clone(), Route::CdAnd),
                None => (here.clone(), Route::Shell),
            };
            self.simple(seq, &text, &simple, dir, route, exit_code);
        }
        if let Some(end) = &here {
            self.command_end_dirs.insert(seq, end.clone());
        }
        here
    }

    /// One simple command of a command entry: its git, forge, redirect and per-kind
    /// effects on the directory it acts in, and the actions it records.
    pub(super) fn simple(
        &mut self,
        seq: u64,
        text: &str,
        simple: &SimpleCommand,
        dir: Option<String>,
        route: Route,
        exit_code: Option<i64>,
    ) {
        let words: Vec<&str> = simple.words.iter().map(String::as_str).collect();
        let program = words
            .first()
            .map(|w| w.rsplit('/').next().unwrap_or(w))
            .unwrap_or("");
        if program == "git" {
            self.git_effects(seq, &words[1..], dir.as_deref(), exit_code);
        }
        self.exported.extend(test_scope::exported(&words));
        let effects = classify::classify_simple_in(simple, &self.exported);
        let output = self.results.get(&seq).and_then(result_text);
        if let Some(d) = &dir
            && test_scope::shows_workspace(&words, output.as_deref())
        {
            self.workspace_dirs.push(d.clone());
        }
        self.forge_pr_checkout(program, &words, dir.as_deref());
        self.redirect_writes(seq, text, simple, dir.as_deref());
        let cmd = Simple {
            seq,
            text,
            dir: &dir,
            output: output.as_deref(),
            exit_code,
        };
        for effect in effects {
            match &effect {
                Effect::TestRun { scope, dir, .. } => self.test_run(&cmd, scope, dir.as_deref()),
                Effect::ConfigRead(class) => self.config_query(&cmd, *class),
                Effect::Edit(paths) if program != "git" && simple.writes_to.is_empty() => {
                    self.program_edit(&cmd, paths)
                }
                _ => {}
            }
            if !effect.categories().is_empty() || effect == Effect::ProfileActivation {
                self.push_action(seq, dir.clone(), route, effect, text, None);
            }
        }
    }

    /// `gh pr checkout N` / `tea pr checkout N` check out the PR head in `dir`.
    fn forge_pr_checkout(&mut self, program: &str, words: &[&str], dir: Option<&str>) {
        if matches!(program, "gh" | "tea" | "glab")
            && matches!(words.get(1).copied(), Some("pr" | "pulls" | "mr"))
            && words.get(2) == Some(&"checkout")
            && let Some(d) = dir
        {
            let st = self.state(d);
            st.head = words.get(3).map(|n| format!("{program} pr checkout {n}"));
            st.pending.clear();
        }
    }

    /// Each redirect target is a pending edit of the directory it lies in.
    fn redirect_writes(&mut self, seq: u64, text: &str, simple: &SimpleCommand, dir: Option<&str>) {
        for target in &simple.writes_to {
            if let Some(d) = resolve(dir, target).and_then(|p| parent(&p)) {
                self.state(&d).pending.push(Pending {
                    seq,
                    what: format!("`{text}` wrote {target}"),
                    committed: false,
                });
            }
        }
    }

    /// A test run covering `scope`: the directory it tests (a runner pointed at
    /// `runner_dir` tests there), that directory's HEAD and pending mutations, its
    /// filter or package, and its counts.
    fn test_run(&mut self, cmd: &Simple, scope: &Scope, runner_dir: Option<&str>) {
        let dir = match runner_dir {
            Some(target) => resolve(cmd.dir.as_deref(), target),
            None => cmd.dir.clone(),
        };
        let (head, pending) = dir
            .as_deref()
            .map(|d| {
                let st = self.state(d);
                (st.head.clone(), st.pending.clone())
            })
            .unwrap_or_default();
        let (filter, package) = match scope {
            Scope::Filtered(f) => (Some(f.describe()), None),
            Scope::Package(p) => (None, Some(p.clone())),
            Scope::Whole => (None, None),
        };
        let filter = filter.or_else(|| cmd.output.and_then(output_filter));
        self.tests.push(TestRun {
            recorded: self.results.contains_key(&cmd.seq),
            filter,
            seq: cmd.seq,
            command: cmd.text.to_owned(),
            dir,
            head,
            pending,
            counts: cmd.output.and_then(parse_counts),
            exit_code: cmd.exit_code,
            package,
        });
    }

    /// A read of configuration, profile or credential material, of `class`.
    fn config_query(&mut self, cmd: &Simple, class: ConfigClass) {
        self.config_reads.push(ConfigRead {
            seq: cmd.seq,
            text: cmd.text.to_owned(),
            class,
            tool: false,
        });
    }

    /// Edits by program (sed -i, cp, touch, ...) change their directory, and any known
    /// directory a path they write (`paths`, as written) lies in.
    fn program_edit(&mut self, cmd: &Simple, paths: &[String]) {
        let mut touched: Vec<String> = cmd.dir.iter().cloned().collect();
        for path in paths {
            if let Some(known) = resolve(cmd.dir.as_deref(), path)
                .and_then(|p| self.known_dir(&p))
                .filter(|k| !touched.iter().any(|t| self.key_for(t) == *k))
            {
                touched.push(known);
            }
        }
        for d in touched {
            self.state(&d).pending.push(Pending {
                seq: cmd.seq,
                what: format!("`{}` edited files", cmd.text),
                committed: false,
            });
        }
    }
}

/// One simple command as its per-kind effects see it.
struct Simple<'a> {
    seq: u64,
    text: &'a str,
    dir: &'a Option<String>,
    output: Option<&'a str>,
    exit_code: Option<i64>,
}

/// `git -C DIR` (the last one wins, relative ones chain; here the first suffices).
pub(super) fn git_c_dir<'a>(words: &[&'a str]) -> Option<&'a str> {
    let program = words.first()?;
    if program.rsplit('/').next() != Some("git") {
        return None;
    }
    words.windows(2).find(|w| w[0] == "-C").map(|w| w[1])
}
