//! The `vouch` binary: `vouch review`, `vouch render`, `vouch eval`, `vouch publish`,
//! `vouch validate-report`, `vouch mcp`, `vouch specialist new|pin`, `vouch specialists list`,
//! `vouch config show`, `vouch completions`, `vouch man`.
//!
//! Exit codes (every subcommand): 0 completed and nothing at or above the failure
//! threshold · 1 verified findings at or above `--fail-on` (for `validate-report`: the
//! report is invalid) · 2 the review could not complete, or a document could not be
//! written (a file, or stdout: see `stdout`) · 3 usage, configuration or
//! unreadable input · 130 aborted.

mod builtins;
mod completions;
mod config;
mod eval;
mod exchange;
mod heap;
mod mcp;
mod output;
mod pin;
mod presenter;
mod publish;
mod render;
mod review;
mod scaffold;
mod schema;
mod specialists;
mod staged;
mod stdout;
mod ui;
mod validate;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// A usage, configuration or input error: exit code 3.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct UsageError(pub String);

/// Whether `error` is the user's to fix (exit code 3): a [`UsageError`] of the binary,
/// or the host's configuration and review errors that say so.
pub(crate) fn is_usage(error: &anyhow::Error) -> bool {
    error.downcast_ref::<UsageError>().is_some()
        || error
            .downcast_ref::<vouch_host::settings::SettingsError>()
            .is_some()
        || matches!(
            error.downcast_ref::<vouch_host::review::ReviewError>(),
            Some(vouch_host::review::ReviewError::Usage(_))
        )
}

/// vouch reviews a git change with a panel of LLM specialists and reports only findings
/// that an independent verification pass proves from repository source.
#[derive(Debug, Parser)]
#[command(name = "vouch", version, about, after_help = ui::AFTER_HELP)]
struct Cli {
    #[command(flatten)]
    global: ui::GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Review a change: merge-base(base, head)..head.
    #[command(after_help = ui::AFTER_HELP)]
    Review(Box<review::ReviewArgs>),
    /// Convert a saved JSON review report into other formats (no model call).
    Render(render::RenderArgs),
    /// Measure review quality on golden-comment cases (precision, recall, F-beta).
    Eval(Box<eval::EvalArgs>),
    /// Publish a saved JSON report to a pull request on GitHub, GitLab or Gitea: one
    /// summary comment updated in place, inline comments on verified findings.
    Publish(publish::PublishArgs),
    /// Validate a review final report (JSON, or Markdown with one fenced JSON block).
    ValidateReport(validate::ValidateArgs),
    /// Serve the final-report validator over MCP (stdio).
    Mcp,
    /// Work with specialist plugins.
    #[command(subcommand)]
    Specialist(SpecialistCommand),
    /// Print a shell completion script to stdout.
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: completions::Shell,
    },
    /// List the built-in specialists and the plugins the composition pins.
    #[command(subcommand)]
    Specialists(SpecialistsCommand),
    /// Inspect vouch's configuration.
    #[command(subcommand)]
    Config(config::ConfigCommand),
    /// Print vouch's man page (roff) to stdout: `vouch man | man -l -`.
    Man,
    /// Print the JSON Schema of a document vouch writes or checks.
    Schema {
        /// Which document.
        #[arg(value_enum)]
        name: schema::SchemaName,
    },
}

#[derive(Debug, Subcommand)]
enum SpecialistsCommand {
    /// Built-in specialists, and the composition's entries with their pins.
    List(specialists::ListArgs),
}

#[derive(Debug, Subcommand)]
enum SpecialistCommand {
    /// Scaffold a custom specialist plugin crate that builds and loads out of the box.
    New {
        /// Plugin id (lowercase kebab-case).
        name: String,
        /// Parent folder: the crate is created at DIR/NAME (default: the current folder,
        /// so ./NAME).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Print the manifest entry that pins a built plugin library: id, version and role
    /// read from the library, its absolute path and sha256. Reading them loads the
    /// library, which runs its code: pin only a library you built or trust.
    Pin {
        /// The built library (e.g. target/release/libmy_review.so).
        library: PathBuf,
        /// The plugin id, when the file name does not imply it.
        #[arg(long)]
        id: Option<String>,
    },
}

fn exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(2))
}

/// Says `error` on stdout as `vouch: …` and returns its exit code (3 for usage errors,
/// else 2). When stdout itself failed, or cannot take the message, it goes to stderr.
fn report_error(error: &anyhow::Error) -> ExitCode {
    let usage = is_usage(error);
    let mut text = stdout::Text::default();
    text.line(format_args!("vouch: {error:#}"));
    let stdout_failed = error
        .chain()
        .any(|e| e.downcast_ref::<stdout::StdoutError>().is_some());
    if stdout_failed {
        text.print_to_stderr();
    } else {
        text.print_or_stderr();
    }
    exit(if usage { 3 } else { 2 })
}

/// In non-interactive runs stderr carries only JSON diagnostics, so a panic (for
/// example in a built-in plugin, which the host turns into an error result) is reported
/// as one diagnostic line without its message. Dynamic plugins carry their own standard
/// library and panic hook, which vouch cannot replace.
fn quiet_panics() {
    let interactive = std::io::stderr().is_terminal() && std::env::var_os("CI").is_none();
    if !interactive && std::env::var_os("VOUCH_LOG").is_none() {
        std::panic::set_hook(Box::new(|_| {
            let line = serde_json::json!({
                "jobId": null, "label": null, "stage": "internal",
                "sourceCount": null, "hunkCount": null, "reason": "panic"
            });
            eprintln!("{line}");
        }));
    }
}

fn main() -> ExitCode {
    heap::bound();
    quiet_panics();
    // Usage errors exit 3 (help and --version exit 0), as for every other bad input,
    // and like every other exit-3 error they leave the failure document in each document
    // the (valid) output flags request, never an earlier run's report.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            if e.use_stderr() {
                output::write_usage_failure(&Cli::command(), &args, &e);
            }
            let _ = e.print();
            return exit(if e.use_stderr() { 3 } else { 0 });
        }
    };
    ui::init(&cli.global);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            return report_error(&anyhow::anyhow!("cannot start the async runtime: {e}"));
        }
    };
    match run_command(cli.command, &runtime) {
        Ok(code) => exit(code),
        Err(e) => report_error(&e),
    }
}

/// Runs one parsed command; its exit code, or the error `main` reports.
fn run_command(command: Command, runtime: &tokio::runtime::Runtime) -> anyhow::Result<i32> {
    match command {
        Command::Completions { shell } => {
            let mut text = Vec::new();
            completions::write_completions::<Cli>(shell, &mut text);
            Ok(completions::print("the completion script", &text)?)
        }
        Command::Config(config::ConfigCommand::Show(args)) => runtime.block_on(config::show(&args)),
        Command::Specialists(SpecialistsCommand::List(args)) => specialists::list(&args),
        Command::Man => {
            let mut text = Vec::new();
            completions::write_man::<Cli>(&mut text)
                .map_err(|e| anyhow::anyhow!("cannot render the man page: {e}"))?;
            Ok(completions::print("the man page", &text)?)
        }
        Command::Schema { name } => Ok(completions::print(
            "the schema",
            schema::text(name).as_bytes(),
        )?),
        Command::Review(args) => runtime.block_on(review::run(*args)),
        Command::Render(args) => runtime.block_on(render::run(&args)),
        Command::Eval(args) => runtime.block_on(eval::run(*args)),
        Command::Publish(args) => runtime.block_on(publish::run(args)),
        Command::ValidateReport(args) => validate::run(&args),
        // stdout is the MCP channel: errors go to stderr, and a client that hangs up
        // before or during the session ends it with exit 3 (unreadable input).
        Command::Mcp => Ok(match runtime.block_on(mcp::serve()) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!(
                    "vouch mcp: {e:#}; an MCP client must send `initialize` as JSON-RPC on stdin"
                );
                3
            }
        }),
        Command::Specialist(SpecialistCommand::Pin { library, id }) => {
            let text = pin::entry(&library, id.as_deref())?;
            stdout::write("the manifest entry", &text)?;
            Ok(0)
        }
        Command::Specialist(SpecialistCommand::New { name, dir }) => {
            let dir = dir.unwrap_or_else(|| PathBuf::from("."));
            let path = scaffold::scaffold(&name, &dir).map_err(|e| UsageError(e.to_string()))?;
            let said = format!("Created the specialist crate at {}\n", path.display());
            stdout::write("the message", &said)?;
            Ok(0)
        }
    }
}
