//! Where a run's documents go (`--format`, `--out`, `--out-dir`) and how they are written:
//! every destination is checked (and a stale file there removed) before the run starts,
//! then receives this run's document — the report, or the format's failure document when
//! the run ended with an error — written atomically. stdout, when it carries a document,
//! carries nothing else.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use vouch_report::{
    Destination, FailureClass, Format, MarkdownOptions, OutArg, Output, ReviewReport, RunFailure,
    plan_outputs, render, render_failure, render_markdown_with, write_json,
};

use crate::UsageError;

fn parse_format(s: &str) -> Result<Format, String> {
    s.parse()
}

/// The output flags of `vouch review` and `vouch render`.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format(s), comma-separated or repeated: json, markdown, sarif, rdjson,
    /// rdjsonl, codequality. Default: markdown. Several formats need --out-dir or
    /// --out FORMAT=PATH.
    #[arg(long, value_delimiter = ',', value_parser = parse_format)]
    pub format: Vec<Format>,
    /// Write a document to a file instead of stdout (stdout then gets a summary): PATH
    /// for the one requested format, or FORMAT=PATH (repeatable).
    #[arg(long)]
    pub out: Vec<OutArg>,
    /// Write every requested format into this folder (created if missing), as
    /// vouch-report.json, vouch-report.md, vouch-report.sarif, vouch-report.rdjson,
    /// vouch-report.rdjsonl and vouch-codequality.json.
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
    /// Shape the Markdown document as a pull-request comment: the hidden marker
    /// `<!-- vouch:summary -->` first, cut at whole items to 60,000 characters.
    #[arg(long)]
    pub comment: bool,
    /// Where the full report is (a URL or a few words), named when a comment is cut.
    #[arg(long, value_name = "WHERE", requires = "comment")]
    pub full_report: Option<String>,
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
pub struct Outputs {
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
    pub fn prepare(
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
    pub fn write_report(&self, report: &ReviewReport) -> Result<()> {
        write_all(&self.outputs, |format, out| match format {
            // Written as it is serialised: a large review's JSON is never one string.
            Format::Json => write_json(report, out),
            Format::Markdown => {
                out.write_all(render_markdown_with(report, &self.markdown).as_bytes())
            }
            other => out.write_all(render(report, other).as_bytes()),
        })?;
        if !self.has_stdout() {
            println!("{}", report.summary);
            for m in &report.messages {
                println!("{m}");
            }
            if !crate::ui::get().quiet {
                self.say_where();
            }
        }
        Ok(())
    }

    /// Writes the failure document of `error` in every planned format and returns the
    /// exit code (3 for usage errors, 2 otherwise). With no document on stdout, stdout
    /// gets `vouch: ERROR`.
    ///
    /// # Errors
    /// A file that cannot be written.
    pub fn write_failure(&self, error: &anyhow::Error) -> Result<i32> {
        write_failure(&self.outputs, error)
    }

    /// True when a document goes to stdout (which then carries nothing else).
    pub fn has_stdout(&self) -> bool {
        self.outputs
            .iter()
            .any(|o| o.destination == Destination::Stdout)
    }

    fn say_where(&self) {
        for o in &self.outputs {
            if let Destination::File(path) = &o.destination {
                println!("{} report written to {}", o.format, path.display());
            }
        }
    }
}

/// Puts each output's document where it goes; `write` writes the document of a format.
fn write_all(
    outputs: &[Output],
    write: impl Fn(Format, &mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    for o in outputs {
        match &o.destination {
            Destination::Stdout => {
                let mut out = std::io::BufWriter::new(std::io::stdout().lock());
                write(o.format, &mut out)
                    .and_then(|()| out.flush())
                    .context("writing the report to stdout")?;
            }
            Destination::File(path) => write_atomically(path, |out| write(o.format, out))?,
        }
    }
    Ok(())
}

/// The failure documents of `error` to `outputs`; see [`Outputs::write_failure`].
pub fn write_failure(outputs: &[Output], error: &anyhow::Error) -> Result<i32> {
    let class = if error.downcast_ref::<UsageError>().is_some() {
        FailureClass::Usage
    } else {
        FailureClass::Internal
    };
    let failure = RunFailure::new(class, format!("{error:#}"));
    write_all(outputs, |format, out| {
        out.write_all(render_failure(&failure, format).as_bytes())
    })?;
    if !outputs.iter().any(|o| o.destination == Destination::Stdout) {
        println!("vouch: {error:#}");
        for o in outputs {
            if let Destination::File(path) = &o.destination {
                println!(
                    "{} failure document written to {}",
                    o.format,
                    path.display()
                );
            }
        }
    }
    Ok(failure.exit_code)
}

impl Outputs {
    /// [`Outputs::prepare`], with its error handled: `Ok(Err(code))` when the output
    /// flags failed but documents bound for stdout got the failure document (return
    /// `code`); `Err` when nothing carries a document (stdout then gets `vouch: …`).
    ///
    /// # Errors
    /// The usage error, when no document goes to stdout.
    pub fn prepare_or_fail(args: &OutputArgs) -> Result<std::result::Result<Outputs, i32>> {
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
pub async fn with_outputs<F>(args: &OutputArgs, body: F) -> Result<i32>
where
    F: AsyncFnOnce() -> Result<(ReviewReport, i32)>,
{
    let outputs = match Outputs::prepare_or_fail(args)? {
        Ok(outputs) => outputs,
        Err(code) => return Ok(code),
    };
    match body().await {
        Ok((report, code)) => {
            outputs.write_report(&report)?;
            Ok(code)
        }
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

/// Writes a document through a temporary file and a rename, so readers never see half.
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let tmp = path.with_file_name(format!(
        ".{}.vouch-tmp",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    ));
    std::fs::File::create(&tmp)
        .and_then(|file| {
            let mut out = std::io::BufWriter::new(file);
            write(&mut out)?;
            out.flush()
        })
        .with_context(|| format!("writing the report to {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("moving the report to {}", path.display()))?;
    Ok(())
}
