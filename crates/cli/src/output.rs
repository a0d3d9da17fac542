//! Where a run's documents go (`--format`, `--out`, `--out-dir`) and how they are written:
//! every destination is checked (and a stale file there removed) before the run starts,
//! then receives this run's document — the report, or the format's failure document when
//! the run ended with an error — written atomically. stdout, when it carries a document,
//! carries nothing else.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{Arg, Args, Command, FromArgMatches};
use vouch_report::{
    Destination, FailureClass, Format, MarkdownOptions, OutArg, Output, ReviewReport, RunFailure,
    plan_outputs, render, render_failure, render_markdown_with, write_json,
};

use crate::UsageError;
use crate::staged::Staged;
use crate::stdout::Text;

fn parse_format(s: &str) -> Result<Format, String> {
    s.parse()
}

/// The output flags of `vouch review` and `vouch render`.
#[derive(Debug, Clone, Args)]
pub(crate) struct OutputArgs {
    /// Output format(s), comma-separated or repeated: json, markdown, sarif, rdjson,
    /// rdjsonl, codequality. Default: markdown. Several formats need --out-dir or
    /// --out FORMAT=PATH.
    #[arg(long, value_delimiter = ',', value_parser = parse_format)]
    pub(crate) format: Vec<Format>,
    /// Write a document to a file instead of stdout (stdout then gets a summary): PATH
    /// for the one requested format, or FORMAT=PATH (repeatable).
    #[arg(long)]
    pub(crate) out: Vec<OutArg>,
    /// Write every requested format into this folder (created if missing), as
    /// vouch-report.json, vouch-report.md, vouch-report.sarif, vouch-report.rdjson,
    /// vouch-report.rdjsonl and vouch-codequality.json.
    #[arg(long)]
    pub(crate) out_dir: Option<PathBuf>,
    /// Shape the Markdown document as a pull-request comment: the hidden marker
    /// `<!-- vouch:summary -->` first, cut at whole items to 60,000 characters.
    #[arg(long)]
    pub(crate) comment: bool,
    /// Where the full report is (a URL or a few words), named when a comment is cut.
    #[arg(long, value_name = "WHERE", requires = "comment")]
    pub(crate) full_report: Option<String>,
}

impl OutputArgs {
    fn markdown_options(&self) -> MarkdownOptions {
        if self.comment {
            MarkdownOptions {
                full_report: self.full_report.clone(),
                ..MarkdownOptions::comment()
            }
        } else {
            MarkdownOptions::default()
        }
    }
}

/// The documents of a run, checked and cleared before the run starts.
#[derive(Debug)]
pub(crate) struct Outputs {
    outputs: Vec<Output>,
    markdown: MarkdownOptions,
}

impl Outputs {
    /// Plans the documents and prepares every file destination: its folder exists (an
    /// `--out-dir` is created), it is not a folder, it can be written, and an older file
    /// there is removed, so no earlier run's document survives this one.
    ///
    /// # Errors
    /// A usage error naming the flag, with the outputs bound for stdout (which then
    /// still carry the failure document, see [`with_outputs`]).
    pub(crate) fn prepare(
        args: &OutputArgs,
    ) -> std::result::Result<Outputs, (Vec<Output>, anyhow::Error)> {
        let outputs = plan_outputs(&args.format, &args.out, args.out_dir.as_deref())
            .map_err(|e| (Vec::new(), UsageError(e.to_string()).into()))?;
        let stdout_only: Vec<Output> = outputs
            .iter()
            .filter(|o| o.destination == Destination::Stdout)
            .cloned()
            .collect();
        if let Some(dir) = &args.out_dir {
            std::fs::create_dir_all(dir).map_err(|e| {
                let e = UsageError(format!(
                    "--out-dir {}: cannot create it: {e}",
                    dir.display()
                ));
                (stdout_only.clone(), e.into())
            })?;
        }
        for o in &outputs {
            if let Destination::File(path) = &o.destination {
                check_out_path(path).map_err(|e| (stdout_only.clone(), e))?;
            }
        }
        Ok(Outputs {
            outputs,
            markdown: args.markdown_options(),
        })
    }

    /// Writes the report in every planned format. With no document on stdout, stdout
    /// gets the summary, the messages and where each document went.
    ///
    /// # Errors
    /// A file that cannot be written.
    pub(crate) fn write_report(&self, report: &ReviewReport) -> Result<()> {
        let staged = write_all(&self.outputs, "report", |format, out| match format {
            // Written as it is serialised: a large review's JSON is never one string.
            Format::Json => write_json(report, out),
            Format::Markdown => {
                out.write_all(render_markdown_with(report, &self.markdown).as_bytes())
            }
            other => out.write_all(render(report, other).as_bytes()),
        })?;
        if !self.has_stdout() {
            let mut text = Text::default();
            text.line(&report.summary);
            for why in why_lines(report) {
                text.line(why);
            }
            for m in &report.messages {
                text.line(m);
            }
            if !crate::ui::get().quiet {
                say_written(&self.outputs, "report", &mut text);
            }
            text.print("the summary")?;
        }
        staged.publish()
    }

    /// [`Outputs::write_report`]: `None` when every document was written. When a file
    /// could not be written (none of the run's files is then in place), a document bound
    /// for stdout becomes the failure document naming it, and its exit code (2) is
    /// returned, so stdout still holds a valid document of this run.
    ///
    /// # Errors
    /// stdout failed, or a file failed and no document goes to stdout.
    pub(crate) fn write_report_or_failure(&self, report: &ReviewReport) -> Result<Option<i32>> {
        let Err(error) = self.write_report(report) else {
            return Ok(None);
        };
        let stdout_failed = error
            .chain()
            .any(|e| e.downcast_ref::<crate::stdout::StdoutError>().is_some());
        let stdout: Vec<Output> = self
            .outputs
            .iter()
            .filter(|o| o.destination == Destination::Stdout)
            .cloned()
            .collect();
        if stdout_failed || stdout.is_empty() {
            return Err(error);
        }
        write_failure(&stdout, &error).map(Some)
    }

    /// Writes the failure document of `error` in every planned format and returns the
    /// exit code (3 for usage errors, 2 otherwise). With no document on stdout, stdout
    /// gets `vouch: ERROR`.
    ///
    /// # Errors
    /// A file that cannot be written.
    pub(crate) fn write_failure(&self, error: &anyhow::Error) -> Result<i32> {
        write_failure(&self.outputs, error)
    }

    /// True when a document goes to stdout (which then carries nothing else).
    pub(crate) fn has_stdout(&self) -> bool {
        self.outputs
            .iter()
            .any(|o| o.destination == Destination::Stdout)
    }
}

/// Writes each output's document (`write` writes a format's): every file to its
/// temporary first, then stdout; the files are put in place together by the caller's
/// [`Staged::publish`], and when any document fails none is (see `staged`). `what`
/// names the document (`report`, `failure document`) in errors.
fn write_all(
    outputs: &[Output],
    what: &str,
    write: impl Fn(Format, &mut dyn Write) -> std::io::Result<()>,
) -> Result<Staged> {
    let mut staged = Staged::default();
    for o in outputs {
        if let Destination::File(path) = &o.destination {
            staged.stage(&format!("the {} {what}", o.format), path, |out| {
                write(o.format, out)
            })?;
        }
    }
    for o in outputs {
        if o.destination == Destination::Stdout {
            let named = format!("the {} {what}", o.format);
            crate::stdout::write_with(named, |out| write(o.format, out))?;
        }
    }
    Ok(staged)
}

/// The failure documents of `error` to `outputs`; see [`Outputs::write_failure`].
pub(crate) fn write_failure(outputs: &[Output], error: &anyhow::Error) -> Result<i32> {
    let class = if crate::is_usage(error) {
        FailureClass::Usage
    } else {
        FailureClass::Internal
    };
    let failure = RunFailure::new(class, format!("{error:#}"));
    let staged = write_failure_documents(outputs, &failure)?;
    if !outputs.iter().any(|o| o.destination == Destination::Stdout) {
        let mut text = Text::default();
        text.line(format_args!("vouch: {error:#}"));
        say_written(outputs, "failure document", &mut text);
        text.print_or_stderr();
    }
    staged.publish()?;
    Ok(failure.exit_code)
}

fn write_failure_documents(outputs: &[Output], failure: &RunFailure) -> Result<Staged> {
    write_all(outputs, "failure document", |format, out| {
        out.write_all(render_failure(failure, format).as_bytes())
    })
}

/// Adds to `text` where each file destination's `what` (`report`, `failure document`)
/// was written.
fn say_written(outputs: &[Output], what: &str, text: &mut Text) {
    for o in outputs {
        if let Destination::File(path) = &o.destination {
            text.line(format_args!(
                "{} {what} written to {}",
                o.format,
                path.display()
            ));
        }
    }
}

/// Destinations are cleared before the run, so a document written over the file a
/// command reads (the report `vouch render` renders) would destroy its own input:
/// refused before anything is touched.
pub(crate) fn refuse_overwriting(input: &Path, output: &OutputArgs) -> Result<()> {
    let o = output;
    let Ok(outputs) = plan_outputs(&o.format, &o.out, o.out_dir.as_deref()) else {
        return Ok(()); // reported by the output planning itself
    };
    let input = std::fs::canonicalize(input).unwrap_or_else(|_| input.to_path_buf());
    for output in outputs {
        if let Destination::File(path) = &output.destination {
            let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
            if target == input {
                return Err(UsageError(format!(
                    "--out {} is the report being rendered; write the {} document to another file",
                    path.display(),
                    output.format
                ))
                .into());
            }
        }
    }
    Ok(())
}

/// After clap refused the command line `args` of `command` with `error` (a usage error,
/// exit 3), gives every document the output flags request this run's failure document
/// naming the error, as every other exit-3 error does, so no earlier run's report stays
/// at an `--out`. The output flags are recovered by [`recover_output_args`]; when they
/// are themselves wrong, cannot be recovered, or a destination cannot be prepared,
/// nothing is written (clap's message is then the only word, as for any wrong output
/// flag). Clap's own message still goes to stderr, printed by the caller.
pub(crate) fn write_usage_failure(command: &Command, args: &[OsString], error: &clap::Error) {
    let Some(recovered) = recover_output_args(command, args) else {
        return;
    };
    // `vouch render` must never write over the report it was asked to render: every
    // positional token may be it (a value of an unknown flag reads as one).
    if recovered.subcommand == "render" {
        let overwrites = recovered
            .positionals
            .iter()
            .any(|report| refuse_overwriting(Path::new(report), &recovered.output).is_err());
        if overwrites {
            return;
        }
    }
    write_usage_failure_to(
        &recovered.output,
        &recovered.subcommand,
        recovered.quiet,
        error,
    );
}

fn write_usage_failure_to(args: &OutputArgs, subcommand: &str, quiet: bool, error: &clap::Error) {
    let Ok(outputs) = Outputs::prepare(args) else {
        return;
    };
    let failure = RunFailure::new(FailureClass::Usage, usage_message(error, subcommand));
    // Best effort: the run already ends with the usage error and its exit code.
    let published = write_failure_documents(&outputs.outputs, &failure)
        .and_then(Staged::publish)
        .is_ok();
    if published && !outputs.has_stdout() && !quiet {
        let mut text = Text::default();
        say_written(&outputs.outputs, "failure document", &mut text);
        let _ = text.print("where the failure documents went");
    }
}

/// The failure documents' text for clap's `error` in `vouch SUBCOMMAND`: its first
/// paragraph on one line, without styling (e.g. "the command line was refused: invalid
/// value '0' for '--concurrency <CONCURRENCY>': 0 is not in 1..=64 (see `vouch review
/// --help`)").
fn usage_message(error: &clap::Error, subcommand: &str) -> String {
    let rendered = error.render().to_string();
    let first = rendered.split("\n\n").next().unwrap_or_default();
    let first = first.trim().strip_prefix("error:").unwrap_or(first).trim();
    let words: Vec<&str> = first.lines().map(str::trim).collect();
    format!(
        "the command line was refused: {} (see `vouch {subcommand} --help`)",
        words.join(" ")
    )
}

/// The output flags of a command line clap refused, recovered leniently.
#[derive(Debug)]
pub(crate) struct RecoveredOutputs {
    /// The subcommand (`review`, `render`).
    pub(crate) subcommand: String,
    /// Its output flags, as its own parse would have read them.
    pub(crate) output: OutputArgs,
    /// Its positional arguments (`render`'s report), in order.
    pub(crate) positionals: Vec<OsString>,
    /// Whether `--quiet`/`-q` was given (stdout then does not say where documents went).
    pub(crate) quiet: bool,
}

/// Recovers the output flags (`--format`, `--out`, `--out-dir`, `--comment`,
/// `--full-report`) of a subcommand that has them from a command line clap refused.
///
/// Clap stops at the first error (also with `Command::ignore_errors`), so flags after it
/// would be lost; instead every token is walked with `command`'s own definitions (which
/// flags take a value, global flags included; an unknown flag is skipped alone), the
/// output flags are collected wherever they stand, and then parsed by a command made of
/// [`OutputArgs`] only, with the same value parsers and rules. `None` when there is no
/// such subcommand or the output flags themselves are wrong.
pub(crate) fn recover_output_args(
    command: &Command,
    args: &[OsString],
) -> Option<RecoveredOutputs> {
    let only_outputs = OutputArgs::augment_args(Command::new("vouch-outputs")).no_binary_name(true);
    let output_longs: Vec<&str> = only_outputs
        .get_arguments()
        .filter_map(Arg::get_long)
        .collect();
    let mut subcommand: Option<&Command> = None;
    let mut quiet = false;
    let mut collected: Vec<OsString> = Vec::new();
    let mut positionals: Vec<OsString> = Vec::new();
    let find = |sub: Option<&Command>, matches: &dyn Fn(&Arg) -> bool| -> Option<Arg> {
        sub.into_iter()
            .flat_map(Command::get_arguments)
            .chain(command.get_arguments())
            .find(|a| matches(a))
            .cloned()
    };
    let is_value = |t: &OsString| {
        let t = t.to_string_lossy();
        t == "-" || !t.starts_with('-')
    };
    let mut rest = args.iter().skip(1).peekable();
    while let Some(token) = rest.next() {
        let text = token.to_string_lossy();
        if text == "--" {
            if subcommand.is_some() {
                positionals.extend(rest.by_ref().cloned());
            }
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            let arg = find(subcommand, &|a: &Arg| {
                a.get_long_and_visible_aliases()
                    .is_some_and(|names| names.contains(&name))
            });
            quiet |= name == "quiet";
            let takes_value = arg.as_ref().is_some_and(|a| a.get_action().takes_values());
            let value = match inline {
                Some(_) => None,
                None if takes_value => rest.next_if(|t| is_value(t)).cloned(),
                None => None,
            };
            if subcommand.is_some() && output_longs.contains(&name) {
                collected.push(token.clone());
                collected.extend(value);
            }
            continue;
        }
        if let Some(shorts) = text.strip_prefix('-').filter(|s| !s.is_empty()) {
            // `-q`, `-vv`; a short flag that takes a value takes the next token when
            // the value is not attached.
            quiet |= shorts.chars().all(|c| c.is_ascii_alphabetic()) && shorts.contains('q');
            let first = shorts.chars().next();
            let arg = find(subcommand, &|a: &Arg| a.get_short() == first);
            if shorts.chars().count() == 1 && arg.is_some_and(|a| a.get_action().takes_values()) {
                rest.next_if(|t| is_value(t));
            }
            continue;
        }
        match subcommand {
            Some(_) => positionals.push(token.clone()),
            None => subcommand = Some(command.find_subcommand(token)?),
        }
    }
    let subcommand = subcommand?;
    let output = parse_outputs(only_outputs, subcommand, collected)?;
    Some(RecoveredOutputs {
        subcommand: subcommand.get_name().to_owned(),
        output,
        positionals,
        quiet,
    })
}

/// The output flags `collected` for `subcommand`, parsed by `only_outputs` (a command
/// of [`OutputArgs`] only) with the same value parsers and rules; `None` when the
/// subcommand has no output flags or they are wrong.
fn parse_outputs(
    only_outputs: Command,
    subcommand: &Command,
    collected: Vec<OsString>,
) -> Option<OutputArgs> {
    let has_outputs = only_outputs
        .get_arguments()
        .all(|o| subcommand.get_arguments().any(|a| a.get_id() == o.get_id()));
    if !has_outputs {
        return None;
    }
    let matches = only_outputs.try_get_matches_from(collected).ok()?;
    OutputArgs::from_arg_matches(&matches).ok()
}

impl Outputs {
    /// [`Outputs::prepare`], with its error handled: `Ok(Err(code))` when the output
    /// flags failed but documents bound for stdout got the failure document (return
    /// `code`); `Err` when nothing carries a document (stdout then gets `vouch: …`).
    ///
    /// # Errors
    /// The usage error, when no document goes to stdout.
    pub(crate) fn prepare_or_fail(args: &OutputArgs) -> Result<std::result::Result<Outputs, i32>> {
        match Outputs::prepare(args) {
            Ok(o) => Ok(Ok(o)),
            Err((stdout, error)) if !stdout.is_empty() => Ok(Err(write_failure(&stdout, &error)?)),
            Err((_, error)) => Err(error),
        }
    }
}

/// Runs a command's body with its outputs: the body's report is written in every
/// format; any error (before or during the run) becomes the failure document of every
/// format, with the documented exit code.
pub(crate) async fn with_outputs<F>(args: &OutputArgs, body: F) -> Result<i32>
where
    F: AsyncFnOnce() -> Result<(ReviewReport, i32)>,
{
    let outputs = match Outputs::prepare_or_fail(args)? {
        Ok(outputs) => outputs,
        Err(code) => return Ok(code),
    };
    match body().await {
        Ok((report, code)) => Ok(outputs.write_report_or_failure(&report)?.unwrap_or(code)),
        Err(error) => outputs.write_failure(&error),
    }
}

/// Checks that `out` can be written (its folder exists, it is not a folder) and removes
/// an older file there, so a run that then fails cannot leave an older result looking
/// current.
fn check_out_path(out: &Path) -> Result<()> {
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        return Err(UsageError(format!(
            "--out {}: the folder {} does not exist; create it or choose another path",
            out.display(),
            parent.display()
        ))
        .into());
    }
    if out.is_dir() {
        return Err(UsageError(format!(
            "--out {} is a folder; give a file path",
            out.display()
        ))
        .into());
    }
    let probe = parent.join(format!(".vouch-out-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| {
        UsageError(format!(
            "--out {}: cannot write in {}: {e}",
            out.display(),
            parent.display()
        ))
    })?;
    let _ = std::fs::remove_file(&probe);
    if out.exists() {
        std::fs::remove_file(out).map_err(|e| {
            UsageError(format!(
                "--out {}: cannot replace the existing file: {e}",
                out.display()
            ))
        })?;
    }
    Ok(())
}

/// Most failures or reasons the summary on stdout lists (the report holds them all).
const MAX_WHY_LINES: usize = 5;
/// Most characters of one of them.
const MAX_WHY_CHARS: usize = 400;

/// Why a review did not end clean, under its summary on stdout: each failure of an
/// incomplete review (its stage and message), else each reason the opinion is not clean
/// with each limitation in its own words; at most [`MAX_WHY_LINES`], each cut at [`MAX_WHY_CHARS`], the rest counted.
fn why_lines(report: &ReviewReport) -> Vec<String> {
    let reasons: Vec<String> = match report.opinion.outcome {
        vouch_core::Outcome::Incomplete => report
            .failures
            .iter()
            .map(|f| match &f.stage {
                // Most failure messages already start with their stage's label.
                Some(stage) if !f.message.starts_with(stage.as_str()) => {
                    format!("{stage}: {}", f.message)
                }
                _ => f.message.clone(),
            })
            .collect(),
        _ if report.opinion.clean => Vec::new(),
        // "coverage is limited" stands for the limitations, which say what limited it.
        _ => report
            .opinion
            .not_clean_because
            .iter()
            .filter(|r| report.limitations.is_empty() || *r != "coverage is limited")
            .cloned()
            .chain(report.limitations.iter().map(|l| l.detail.clone()))
            .collect(),
    };
    let mut out: Vec<String> = reasons
        .iter()
        .take(MAX_WHY_LINES)
        .map(|r| {
            let cut: String = r.chars().take(MAX_WHY_CHARS).collect();
            let more = if cut.len() < r.len() { "…" } else { "" };
            format!("  - {cut}{more}")
        })
        .collect();
    if reasons.len() > MAX_WHY_LINES {
        out.push(format!(
            "  - … and {} more in the report",
            reasons.len() - MAX_WHY_LINES
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A command shaped like vouch's: a global `--quiet`/`-q` and `--color VALUE`, a
    /// `review` with the output flags, a flag taking a bounded value and a switch, and
    /// a `render` with a positional report.
    fn command() -> Command {
        let review = OutputArgs::augment_args(Command::new("review"))
            .arg(
                Arg::new("concurrency")
                    .long("concurrency")
                    .value_parser(clap::value_parser!(u16).range(1..=64)),
            )
            .arg(
                Arg::new("no_repo_config")
                    .long("no-repo-config")
                    .action(clap::ArgAction::SetTrue),
            );
        let render = OutputArgs::augment_args(Command::new("render")).arg(Arg::new("report"));
        Command::new("vouch")
            .arg(
                Arg::new("quiet")
                    .long("quiet")
                    .short('q')
                    .global(true)
                    .action(clap::ArgAction::SetTrue),
            )
            .arg(Arg::new("color").long("color").global(true))
            .subcommand(review)
            .subcommand(render)
            .subcommand(Command::new("man"))
    }

    fn recover(line: &[&str]) -> Option<RecoveredOutputs> {
        let args: Vec<OsString> = std::iter::once("vouch")
            .chain(line.iter().copied())
            .map(OsString::from)
            .collect();
        recover_output_args(&command(), &args)
    }

    #[test]
    fn output_flags_are_recovered_wherever_they_stand() {
        for line in [
            &[
                "review",
                "--concurrency",
                "0",
                "--format",
                "json,sarif",
                "--out",
                "sarif=a.sarif",
            ][..],
            &[
                "review",
                "--format=json",
                "--bogus",
                "--format",
                "sarif",
                "--out=sarif=a.sarif",
            ],
            &[
                "--color",
                "never",
                "review",
                "--no-repo-config",
                "--format",
                "json",
                "--out",
                "sarif=a.sarif",
                "--format",
                "sarif",
            ],
        ] {
            let recovered = recover(line).unwrap_or_else(|| panic!("{line:?}"));
            assert_eq!(recovered.subcommand, "review");
            assert_eq!(
                recovered.output.format,
                [Format::Json, Format::Sarif],
                "{line:?}"
            );
            assert_eq!(
                recovered.output.out,
                [OutArg::Pair(Format::Sarif, PathBuf::from("a.sarif"))],
                "{line:?}"
            );
            assert!(!recovered.quiet, "{line:?}");
        }
    }

    #[test]
    fn a_value_is_taken_only_by_a_flag_that_takes_one() {
        // A flag's value never starts with `-`: `--out` is not `--concurrency`'s value.
        let r = recover(&["review", "--concurrency", "--out", "r.json", "-q"]).unwrap();
        assert_eq!(r.output.out, [OutArg::Path(PathBuf::from("r.json"))]);
        assert!(r.quiet);
        // A switch takes no value: the token after it is a positional.
        let r = recover(&["review", "--no-repo-config", "stray", "--out-dir", "d"]).unwrap();
        assert_eq!(r.positionals, [OsString::from("stray")]);
        assert_eq!(r.output.out_dir, Some(PathBuf::from("d")));
        // After `--` everything is positional, output flags included.
        let r = recover(&["render", "--format", "json", "--", "--out", "x"]).unwrap();
        assert_eq!(r.subcommand, "render");
        assert!(r.output.out.is_empty());
        assert_eq!(
            r.positionals,
            [OsString::from("--out"), OsString::from("x")]
        );
    }

    #[test]
    fn wrong_output_flags_or_no_output_subcommand_recover_nothing() {
        for line in [
            &["review", "--format", "xml", "--concurrency", "0"][..],
            &["review", "--concurrency", "0", "--out"],
            &["review", "--out", "", "--bogus"],
            &["review", "--full-report", "url", "--bogus"],
            &["man", "--bogus"],
            &["no-such-command", "--out", "r.json"],
            &["--bogus"],
        ] {
            assert!(recover(line).is_none(), "{line:?}");
        }
    }
}
