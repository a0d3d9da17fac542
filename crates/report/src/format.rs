//! The output formats and where each document goes (`--format`, `--out`, `--out-dir`).

use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Output formats of `vouch review --format` and `vouch render --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    /// The canonical JSON report (`vouch.review-report/2`).
    Json,
    /// Markdown for people and pull-request comments.
    Markdown,
    /// SARIF 2.1.0 (GitHub code scanning).
    Sarif,
    /// reviewdog rdjson: one `DiagnosticResult`.
    Rdjson,
    /// reviewdog rdjsonl: one `Diagnostic` per line.
    Rdjsonl,
    /// GitLab Code Quality (merge-request widget).
    Codequality,
}

impl Format {
    /// Every format, in the order help text lists them.
    pub const ALL: [Format; 6] = [
        Format::Json,
        Format::Markdown,
        Format::Sarif,
        Format::Rdjson,
        Format::Rdjsonl,
        Format::Codequality,
    ];

    /// The name `--format` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Markdown => "markdown",
            Format::Sarif => "sarif",
            Format::Rdjson => "rdjson",
            Format::Rdjsonl => "rdjsonl",
            Format::Codequality => "codequality",
        }
    }

    /// The file name `--out-dir` gives this format's document.
    pub fn file_name(self) -> &'static str {
        match self {
            Format::Json => "vouch-report.json",
            Format::Markdown => "vouch-report.md",
            Format::Sarif => "vouch-report.sarif",
            Format::Rdjson => "vouch-report.rdjson",
            Format::Rdjsonl => "vouch-report.rdjsonl",
            Format::Codequality => "vouch-codequality.json",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "md" => Ok(Format::Markdown),
            _ => Format::ALL
                .into_iter()
                .find(|f| f.as_str() == s)
                .ok_or_else(|| {
                    let names: Vec<&str> = Format::ALL.iter().map(|f| f.as_str()).collect();
                    format!("unknown format `{s}`: use one of {}", names.join(", "))
                }),
        }
    }
}

/// One `--out` value: a file for the only format, or `FORMAT=PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutArg {
    /// `--out PATH`: the one requested format goes to PATH.
    Path(PathBuf),
    /// `--out FORMAT=PATH`.
    Pair(Format, PathBuf),
}

impl FromStr for OutArg {
    type Err = String;

    /// `FORMAT=PATH` when the text before the first `=` names a format, else a path.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.is_empty() {
            return Err("an empty path".into());
        }
        if let Some((name, path)) = s.split_once('=')
            && let Ok(format) = name.parse::<Format>()
        {
            if path.is_empty() {
                return Err(format!("`{s}` names no path after `=`"));
            }
            return Ok(OutArg::Pair(format, PathBuf::from(path)));
        }
        Ok(OutArg::Path(PathBuf::from(s)))
    }
}

/// Where one document goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// Standard output (then it carries nothing else).
    Stdout,
    /// A file, written atomically.
    File(PathBuf),
}

/// One document of a run: a format and its destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// The format.
    pub format: Format,
    /// Where it goes.
    pub destination: Destination,
}

/// Why a set of output flags cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutputError {
    /// Several documents would share stdout.
    #[error(
        "several formats ({0}) cannot share stdout: add --out-dir DIR, or --out FORMAT=PATH for each"
    )]
    SeveralOnStdout(String),
    /// A plain `--out PATH` with more than one format.
    #[error(
        "--out {0} names one file but {1} formats were requested: use --out-dir DIR or --out FORMAT=PATH"
    )]
    OnePathManyFormats(String, usize),
    /// More than one plain `--out PATH`.
    #[error("--out is given more than once without FORMAT=: write --out FORMAT=PATH for each")]
    SeveralPlainPaths,
    /// Two documents to the same file.
    #[error("two documents would be written to {0}: give each format its own path")]
    SamePath(String),
}

/// The documents a run writes. Rule: every `--out FORMAT=PATH` writes FORMAT to PATH;
/// every `--format` value without such a pair goes to `--out-dir` (under
/// [`Format::file_name`]), else to a plain `--out PATH` (only when it is the one format),
/// else to stdout — and stdout carries at most one document. With no `--format` and no
/// `--out FORMAT=PATH`, the format is Markdown. Two documents never share a file.
///
/// # Errors
/// [`OutputError`] naming the conflict and the flag that resolves it.
pub fn plan_outputs(
    formats: &[Format],
    outs: &[OutArg],
    out_dir: Option<&Path>,
) -> Result<Vec<Output>, OutputError> {
    let mut plain = None;
    let mut outputs: Vec<Output> = Vec::new();
    for out in outs {
        match out {
            OutArg::Pair(format, path) => outputs.push(Output {
                format: *format,
                destination: Destination::File(path.clone()),
            }),
            OutArg::Path(path) if plain.is_none() => plain = Some(path.clone()),
            OutArg::Path(_) => return Err(OutputError::SeveralPlainPaths),
        }
    }
    let mut requested: Vec<Format> = if formats.is_empty() && outputs.is_empty() {
        vec![Format::Markdown]
    } else {
        formats.to_vec()
    };
    requested.dedup();
    let mut seen = std::collections::BTreeSet::new();
    requested.retain(|f| seen.insert(*f));
    let rest: Vec<Format> = requested
        .into_iter()
        .filter(|f| !outputs.iter().any(|o| o.format == *f))
        .collect();
    if let Some(path) = plain {
        if rest.len() != 1 || out_dir.is_some() {
            return Err(OutputError::OnePathManyFormats(
                path.display().to_string(),
                rest.len() + outputs.len(),
            ));
        }
        outputs.push(Output {
            format: rest[0],
            destination: Destination::File(path),
        });
    } else if let Some(dir) = out_dir {
        outputs.extend(rest.iter().map(|f| Output {
            format: *f,
            destination: Destination::File(dir.join(f.file_name())),
        }));
    } else if rest.len() > 1 {
        let names: Vec<&str> = rest.iter().map(|f| f.as_str()).collect();
        return Err(OutputError::SeveralOnStdout(names.join(", ")));
    } else if let Some(format) = rest.first() {
        outputs.push(Output {
            format: *format,
            destination: Destination::Stdout,
        });
    }
    let mut paths = std::collections::BTreeSet::new();
    for o in &outputs {
        if let Destination::File(p) = &o.destination
            && !paths.insert(p.clone())
        {
            return Err(OutputError::SamePath(p.display().to_string()));
        }
    }
    Ok(outputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(format: Format, path: &str) -> Output {
        Output {
            format,
            destination: Destination::File(PathBuf::from(path)),
        }
    }

    fn stdout(format: Format) -> Output {
        Output {
            format,
            destination: Destination::Stdout,
        }
    }

    fn out(s: &str) -> OutArg {
        s.parse().unwrap()
    }

    #[test]
    fn format_names_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.as_str().parse::<Format>(), Ok(f));
        }
        assert_eq!("md".parse::<Format>(), Ok(Format::Markdown));
        let err = "xml".parse::<Format>().unwrap_err();
        assert!(
            err.contains("`xml`") && err.contains("codequality"),
            "{err}"
        );
    }

    #[test]
    fn out_values_are_pairs_only_when_they_name_a_format() {
        assert_eq!(
            out("sarif=a.sarif"),
            OutArg::Pair(Format::Sarif, "a.sarif".into())
        );
        assert_eq!(out("a=b.json"), OutArg::Path("a=b.json".into()));
        assert_eq!(out("report.md"), OutArg::Path("report.md".into()));
        assert!("sarif=".parse::<OutArg>().is_err());
        assert!("".parse::<OutArg>().is_err());
    }

    /// Formats, `--out` values, `--out-dir`, and the expected plan.
    type Case<'a> = (
        &'a [Format],
        Vec<OutArg>,
        Option<&'a Path>,
        Result<Vec<Output>, OutputError>,
    );

    #[test]
    fn output_plans() {
        use Format::*;
        let dir = Path::new("d");
        let cases: Vec<Case> = vec![
            (&[], vec![], None, Ok(vec![stdout(Markdown)])),
            (&[Sarif], vec![], None, Ok(vec![stdout(Sarif)])),
            (
                &[Json],
                vec![out("r.json")],
                None,
                Ok(vec![file(Json, "r.json")]),
            ),
            (
                &[],
                vec![out("r.md")],
                None,
                Ok(vec![file(Markdown, "r.md")]),
            ),
            (
                &[Json, Sarif],
                vec![],
                Some(dir),
                Ok(vec![
                    file(Json, "d/vouch-report.json"),
                    file(Sarif, "d/vouch-report.sarif"),
                ]),
            ),
            (&[Json, Json], vec![], None, Ok(vec![stdout(Json)])),
            (
                &[],
                vec![out("sarif=s.sarif"), out("rdjsonl=r.jsonl")],
                None,
                Ok(vec![file(Sarif, "s.sarif"), file(Rdjsonl, "r.jsonl")]),
            ),
            (
                &[Markdown],
                vec![out("sarif=s.sarif")],
                None,
                Ok(vec![file(Sarif, "s.sarif"), stdout(Markdown)]),
            ),
            (
                &[Sarif, Json],
                vec![out("sarif=s.sarif")],
                Some(dir),
                Ok(vec![
                    file(Sarif, "s.sarif"),
                    file(Json, "d/vouch-report.json"),
                ]),
            ),
            (
                &[Json, Sarif],
                vec![],
                None,
                Err(OutputError::SeveralOnStdout("json, sarif".into())),
            ),
            (
                &[Json, Sarif],
                vec![out("r.json")],
                None,
                Err(OutputError::OnePathManyFormats("r.json".into(), 2)),
            ),
            (
                &[Json],
                vec![out("a"), out("b")],
                None,
                Err(OutputError::SeveralPlainPaths),
            ),
            (
                &[],
                vec![out("json=x"), out("sarif=x")],
                None,
                Err(OutputError::SamePath("x".into())),
            ),
        ];
        for (formats, outs, dir, expected) in cases {
            assert_eq!(
                plan_outputs(formats, &outs, dir),
                expected,
                "{formats:?} {outs:?} {dir:?}"
            );
        }
    }

    fn format_strategy() -> impl proptest::strategy::Strategy<Value = Format> {
        proptest::sample::select(Format::ALL.to_vec())
    }

    proptest::proptest! {
        /// For any flags: stdout carries at most one document, no two documents share a
        /// file, and every requested format is written exactly once (or the flags are
        /// refused).
        #[test]
        fn plans_never_share_stdout_or_a_file_and_drop_no_format(
            formats in proptest::collection::vec(format_strategy(), 0..5),
            pairs in proptest::collection::vec((format_strategy(), "[ab]{1,2}"), 0..4),
            plain in proptest::option::of("[ab]{1,2}"),
            dir in proptest::option::of("[ab]"),
        ) {
            let mut outs: Vec<OutArg> = pairs
                .iter()
                .map(|(f, p)| OutArg::Pair(*f, PathBuf::from(p)))
                .collect();
            outs.extend(plain.map(|p| OutArg::Path(PathBuf::from(p))));
            let dir = dir.map(PathBuf::from);
            if let Ok(plan) = plan_outputs(&formats, &outs, dir.as_deref()) {
                let on_stdout = plan.iter().filter(|o| o.destination == Destination::Stdout).count();
                proptest::prop_assert!(on_stdout <= 1);
                let files: Vec<&Destination> = plan.iter().map(|o| &o.destination).filter(|d| **d != Destination::Stdout).collect();
                let unique: std::collections::BTreeSet<String> = files.iter().map(|d| format!("{d:?}")).collect();
                proptest::prop_assert_eq!(unique.len(), files.len());
                for f in formats.iter().chain(pairs.iter().map(|(f, _)| f)) {
                    proptest::prop_assert!(plan.iter().any(|o| o.format == *f), "{f} dropped");
                }
                proptest::prop_assert!(!plan.is_empty());
            }
        }
    }
}
