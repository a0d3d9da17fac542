//! The benchmark table: one row per size, every column explained in `BENCHMARKS.md`.

use crate::cost_run::{Change, CostRow};
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

/// The cost table's columns, in order.
pub const COST_COLUMNS: [&str; 13] = [
    "reviewer",
    "window",
    "tools",
    "files",
    "changed lines",
    "requests",
    "requests / file",
    "prompt tokens",
    "prompt tokens / line",
    "cached share",
    "executions per lane",
    "largest request / bound",
    "coverage · opinion",
];

/// Parts named in the list below the cost table, per reviewer; the rest are summed.
pub const TOP_PARTS: usize = 6;

/// The cost of each reviewer of `change` as a Markdown table with [`COST_COLUMNS`],
/// then, per reviewer, the largest parts of its prompt tokens ([`crate::cost::parts`]).
pub fn cost_table(change: &Change, rows: &[CostRow]) -> String {
    let mut out = format!("| {} |\n", COST_COLUMNS.join(" | "));
    out.push_str(&format!("|{}\n", "---:|".repeat(COST_COLUMNS.len())));
    for row in rows {
        out.push_str(&format!("| {} |\n", cost_cells(change, row).join(" | ")));
    }
    out.push_str("\nPrompt tokens by part (largest first):\n\n");
    for row in rows {
        let cells = cost_cells(change, row);
        out.push_str(&format!(
            "- {}, window {}, tools {}: {}\n",
            cells[0],
            cells[1],
            cells[2],
            shares(&row.parts)
        ));
    }
    out
}

/// The [`TOP_PARTS`] largest of `parts` with their shares of the whole, then the rest.
fn shares(parts: &std::collections::BTreeMap<String, u64>) -> String {
    let total = parts.values().sum::<u64>().max(1) as f64;
    let mut sorted: Vec<(&String, &u64)> = parts.iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let share = |n: u64| format!("{:.0}%", 100.0 * n as f64 / total);
    let mut out: Vec<String> = sorted
        .iter()
        .take(TOP_PARTS)
        .map(|(name, n)| format!("{name} {}", share(**n)))
        .collect();
    let rest: u64 = sorted.iter().skip(TOP_PARTS).map(|(_, n)| **n).sum();
    if rest > 0 {
        out.push(format!("other {}", share(rest)));
    }
    out.join(", ")
}

fn cost_cells(change: &Change, row: &CostRow) -> Vec<String> {
    let per = |n: f64, d: f64| format!("{:.1}", n / d.max(1.0));
    let lanes: Vec<String> = row
        .executions
        .iter()
        .map(|(lane, n)| format!("{lane}: {n}"))
        .collect();
    let (largest, bound) = row.largest;
    let cells = vec![
        row.reviewer.clone(),
        opt(row.window.map(|w| w.to_string())),
        opt(row.tools.map(|t| if t { "on" } else { "off" }.to_owned())),
        change.files.to_string(),
        change.lines.to_string(),
        row.requests.to_string(),
        per(row.requests as f64, change.files as f64),
        row.prompt_tokens.to_string(),
        per(row.prompt_tokens as f64, change.lines as f64),
        format!(
            "{:.0}%",
            100.0 * row.cached_tokens as f64 / row.prompt_tokens.max(1) as f64
        ),
        lanes.join(", "),
        match bound {
            Some(bound) if largest > u64::from(bound) => format!("{largest} / {bound} (over)"),
            Some(bound) => format!("{largest} / {bound}"),
            None => format!("{largest} / -"),
        },
        row.outcome.clone(),
    ];
    debug_assert_eq!(cells.len(), COST_COLUMNS.len());
    cells
}
