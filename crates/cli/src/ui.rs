//! How vouch talks to a person: `--quiet`, `-v`/`-vv`, `--color` and `NO_COLOR`, and
//! the tracing logs they switch on. Chosen once in `main` and read by the commands.

use std::io::IsTerminal;
use std::sync::OnceLock;

use clap::{Args, ValueEnum};

/// vouch's own crates: `-v` logs these, never the dependencies' noise.
const OWN_CRATES: &[&str] = &[
    "vouch",
    "vouch_cli",
    "vouch_core",
    "vouch_git",
    "vouch_host",
    "vouch_llm",
    "vouch_report",
    "vouch_final_report",
];

/// `--color`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    /// Color on a terminal, unless NO_COLOR is set.
    #[default]
    Auto,
    /// Always color.
    Always,
    /// Never color.
    Never,
}

/// The global flags every subcommand accepts.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct GlobalArgs {
    /// Errors and the final summary only: no progress display; JSON diagnostics keep only
    /// lines reporting a problem and the final `review-finished`.
    #[arg(long, short, global = true, conflicts_with = "verbose")]
    pub(crate) quiet: bool,
    /// Log vouch's own steps to stderr (-v: info, -vv: debug). VOUCH_LOG=FILTER sets any
    /// tracing filter instead.
    #[arg(long, short, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
    /// When to use color on stderr: auto (a terminal, and NO_COLOR unset), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub(crate) color: ColorChoice,
}

/// The choices in force for this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ui {
    /// `--quiet`.
    pub(crate) quiet: bool,
    /// Whether stderr gets ANSI colors.
    pub(crate) color: bool,
    /// `-v` count.
    pub(crate) verbose: u8,
}

static UI: OnceLock<Ui> = OnceLock::new();

/// Rule: color is used with `--color always`; never with `--color never`; with `auto`
/// only when stderr is a terminal and `NO_COLOR` is unset or empty (no-color.org).
pub(crate) fn color_enabled(
    choice: ColorChoice,
    stderr_is_terminal: bool,
    no_color: Option<&str>,
) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => stderr_is_terminal && no_color.is_none_or(str::is_empty),
    }
}

/// The tracing filter for `-v` counts: `None` without `-v`.
pub(crate) fn verbose_filter(verbose: u8) -> Option<String> {
    let level = match verbose {
        0 => return None,
        1 => "info",
        _ => "debug",
    };
    Some(
        OWN_CRATES
            .iter()
            .map(|c| format!("{c}={level}"))
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// Records the choices and starts logging when asked for (`-v` or `VOUCH_LOG`).
pub(crate) fn init(args: &GlobalArgs) {
    let no_color = std::env::var("NO_COLOR").ok();
    let ui = Ui {
        quiet: args.quiet,
        color: color_enabled(
            args.color,
            std::io::stderr().is_terminal(),
            no_color.as_deref(),
        ),
        verbose: args.verbose,
    };
    let _ = UI.set(ui);
    // Logs only on request: in non-interactive runs stderr carries diagnostics alone.
    let filter = std::env::var("VOUCH_LOG")
        .ok()
        .or_else(|| verbose_filter(args.verbose));
    if let Some(filter) = filter {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(ui.color)
            .with_writer(std::io::stderr)
            .try_init();
    }
}

/// The choices in force (defaults before [`init`]).
pub(crate) fn get() -> Ui {
    UI.get().copied().unwrap_or(Ui {
        quiet: false,
        color: false,
        verbose: 0,
    })
}

/// The end of `vouch --help` and `vouch review --help`: exit codes and environment.
pub(crate) const AFTER_HELP: &str = "\
Exit codes:
  0    completed; nothing at or above the failure threshold
  1    verified findings at or above --fail-on (validate-report: the report is invalid)
  2    the review could not complete (incomplete), vouch failed internally, or a
       document could not be written (a file, or stdout: a full disk, a closed pipe)
  3    usage, configuration or unreadable input, including a model endpoint that
       refuses before the review starts (wrong URL, key or model)
  130  aborted (Ctrl-C or SIGTERM)

Environment:
  OPENAI_BASE_URL      OpenAI-compatible base URL (--base-url wins over it)
  OPENAI_API_KEY       API key; another variable is named with --api-key-env
  VOUCH_MODEL          model name (--model wins over it)
  VOUCH_CONFIG         user configuration file (default:
                       $XDG_CONFIG_HOME/vouch/config.toml, else ~/.config/vouch/config.toml)
  VOUCH_LOG            tracing filter for logs on stderr (e.g. vouch_llm=debug)
  VOUCH_INLINE_BYTES   bytes of source given inline per stage execution (default 12000);
                       shards are sized within it (see max_shard_tokens)
  NO_COLOR             no color on stderr (see --color)
  CI                   when set: no progress display, JSON diagnostics only on stderr";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn color_rule() {
        use ColorChoice::*;
        // (choice, terminal, NO_COLOR, expected)
        let cases = [
            (Auto, true, None, true),
            (Auto, true, Some(""), true),
            (Auto, true, Some("1"), false),
            (Auto, false, None, false),
            (Always, false, Some("1"), true),
            (Never, true, None, false),
        ];
        for (choice, tty, no_color, expected) in cases {
            assert_eq!(
                color_enabled(choice, tty, no_color),
                expected,
                "{choice:?} {tty} {no_color:?}"
            );
        }
    }

    #[test]
    fn verbosity_logs_only_vouch_crates() {
        assert_eq!(verbose_filter(0), None);
        let info = verbose_filter(1).unwrap();
        assert!(
            info.contains("vouch_llm=info") && !info.contains("debug"),
            "{info}"
        );
        let debug = verbose_filter(2).unwrap();
        assert!(
            debug
                .split(',')
                .all(|d| d.starts_with("vouch") && d.ends_with("=debug")),
            "{debug}"
        );
        assert!(!debug.contains("reqwest") && !debug.contains("hyper"));
    }
}
