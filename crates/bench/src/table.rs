//! The benchmark table: one row per size, every column explained in `BENCHMARKS.md`.

use crate::run::Row;

/// The table's columns, in order.
pub const COLUMNS: [&str; 21] = [
    "N",
    "files",
    "changed lines",
    "snapshot ms",
    "snapshot CPU ms",
    "git diff ms",
    "snapshot / git",
    "review wall s",
    "host CPU s",
    "CPU / snapshot",
    "peak RSS MiB",
    "requests",
    "prompt B / line",
    "largest request KB",
    "reviewed / files",
    "not reviewed",
    "coverage",
    "opinion",
    "latency wall s",
    "critical path s",
    "wall / critical",
];

/// The rows as a Markdown table with [`COLUMNS`]; a value not measured is `-`.
pub fn markdown_table(rows: &[Row]) -> String {
    let mut out = format!("| {} |\n", COLUMNS.join(" | "));
    out.push_str(&format!("|{}\n", "---:|".repeat(COLUMNS.len())));
    for row in rows {
        out.push_str(&format!("| {} |\n", cells(row).join(" | ")));
    }
    out
}

fn cells(row: &Row) -> Vec<String> {
    let review = row.review.as_ref();
    let latency = row.latency.as_ref();
    let cells = vec![
        row.n.to_string(),
        row.files.to_string(),
        row.changed_lines.to_string(),
        ms(row.snapshot_secs),
        ms(row.snapshot_cpu_secs),
        ms(row.git_diff_secs),
        ratio(row.snapshot_secs, row.git_diff_secs),
        opt(review.map(|r| secs(r.wall_secs))),
        opt(review.map(|r| secs(r.cpu_secs))),
        opt(review.map(|r| ratio(r.cpu_secs, row.snapshot_cpu_secs))),
        opt(review.map(|r| format!("{:.0}", r.max_rss as f64 / (1024.0 * 1024.0)))),
        opt(review.map(|r| r.requests.to_string())),
        opt(review.map(|r| {
            format!(
                "{:.0}",
                r.prompt_bytes as f64 / row.changed_lines.max(1) as f64
            )
        })),
        opt(review.map(|r| format!("{:.1}", r.largest_request as f64 / 1000.0))),
        opt(review.map(|r| match r.files_reviewed {
            Some(n) => format!("{n} / {}", row.files),
            None => "-".into(),
        })),
        opt(review.map(|r| r.not_reviewed.clone())),
        opt(review.map(|r| r.coverage.clone())),
        opt(review.map(|r| r.opinion.clone())),
        opt(latency.map(|l| secs(l.wall_secs))),
        opt(latency.map(|l| secs(l.critical_secs))),
        opt(latency.map(|l| ratio(l.wall_secs, l.critical_secs))),
    ];
    debug_assert_eq!(cells.len(), COLUMNS.len());
    cells
}

fn ms(secs: f64) -> String {
    format!("{:.0}", secs * 1000.0)
}

fn secs(secs: f64) -> String {
    format!("{secs:.2}")
}

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}×", a / b)
    } else {
        "-".into()
    }
}

fn opt(cell: Option<String>) -> String {
    cell.unwrap_or_else(|| "-".into())
}
