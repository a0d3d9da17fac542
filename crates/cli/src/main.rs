//! The `vouch` binary: `vouch review`, `vouch publish`, `vouch validate-report`,
//! `vouch mcp`, `vouch specialist new`.
//!
//! Exit codes (every subcommand): 0 completed and nothing at or above the failure
//! threshold · 1 verified findings at or above `--fail-on` (for `validate-report`: the
//! report is invalid) · 2 the review could not complete · 3 usage, configuration or
//! unreadable input · 130 aborted.

mod builtins;
mod mcp;
mod presenter;
mod publish;
mod review;
mod scaffold;
mod validate;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// A usage, configuration or input error: exit code 3.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// vouch reviews a git change with a panel of LLM specialists and reports only findings
/// that an independent verification pass proves from repository source.
#[derive(Debug, Parser)]
#[command(name = "vouch", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Review a change: merge-base(base, head)..head.
    Review(Box<review::ReviewArgs>),
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
}

#[derive(Debug, Subcommand)]
enum SpecialistCommand {
    /// Scaffold a custom specialist plugin crate that builds and loads out of the box.
    New {
        /// Plugin id (lowercase kebab-case).
        name: String,
        /// Folder to create the crate in (default: ./NAME).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

fn init_logging() {
    // Logs only on request: in non-interactive runs stderr carries diagnostics alone.
    if let Ok(filter) = std::env::var("VOUCH_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(std::io::stderr().is_terminal())
            .with_writer(std::io::stderr)
            .try_init();
    }
}

fn exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(2))
}

fn report_error(error: &anyhow::Error) -> ExitCode {
    let usage = error.downcast_ref::<UsageError>().is_some();
    println!("vouch: {error:#}");
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
    init_logging();
    quiet_panics();
    // Usage errors exit 3 (help and --version exit 0), as for every other bad input.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return exit(if e.use_stderr() { 3 } else { 0 });
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            println!("vouch: cannot start the async runtime: {e}");
            return exit(2);
        }
    };
    let result = match cli.command {
        Command::Review(args) => runtime.block_on(review::run(*args)),
        Command::Publish(args) => runtime.block_on(publish::run(args)),
        Command::ValidateReport(args) => validate::run(&args),
        // stdout is the MCP channel: errors go to stderr, and a client that hangs up
        // before or during the session ends it with exit 3 (unreadable input).
        Command::Mcp => {
            return match runtime.block_on(mcp::serve()) {
                Ok(()) => exit(0),
                Err(e) => {
                    eprintln!(
                        "vouch mcp: {e:#}; an MCP client must send `initialize` as JSON-RPC on stdin"
                    );
                    exit(3)
                }
            };
        }
        Command::Specialist(SpecialistCommand::New { name, dir }) => {
            let dir = dir.unwrap_or_else(|| PathBuf::from("."));
            scaffold::scaffold(&name, &dir)
                .map(|path| {
                    println!("Created the specialist crate at {}", path.display());
                    0
                })
                .map_err(|e| anyhow::Error::new(UsageError(e.to_string())))
        }
    };
    match result {
        Ok(code) => exit(code),
        Err(e) => report_error(&e),
    }
}
