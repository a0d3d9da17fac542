//! The results document of `vouch eval` (schema `vouch.eval-results/1`, documented in
//! docs/eval.md) and its Markdown and CSV renderings.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::category::{Profile, Severity};
use crate::score::{CaseCounts, Counts, Metrics, Spread, spread, sum_counts};

/// Schema tag of the results document.
pub const RESULTS_SCHEMA_VERSION: &str = "vouch.eval-results/1";

/// What was run: enough to repeat it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunConfig {
    /// The reviewer's model.
    pub reviewer_model: String,
    /// The judge's model (`null` when no case needed a judge).
    pub judge_model: Option<String>,
    /// The composition manifest (path, or `builtin:default`).
    pub manifest: String,
    /// F-beta's beta.
    pub beta: f64,
    /// Runs.
    pub repeat: u32,
    /// The response cache folder, if any.
    pub cache: Option<String>,
    /// vouch's version.
    pub vouch_version: String,
}

/// How a case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaseStatus {
    /// Reviewed completely and scored.
    Scored,
    /// The review did not complete (incomplete or aborted): not scored, never counted
    /// as zero findings.
    Incomplete,
    /// The review or the judge failed before a result: not scored.
    Failed,
}

impl CaseStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CaseStatus::Scored => "scored",
            CaseStatus::Incomplete => "incomplete",
            CaseStatus::Failed => "failed",
        }
    }
}

/// What one case cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// Review tokens (prompt + completion, as reported, cached answers included; vouch's
    /// estimate for replies whose endpoint reported none).
    pub review_tokens: u64,
    /// Review model calls (cached answers included).
    pub review_calls: u64,
    /// Judge questions asked.
    pub judge_questions: u64,
    /// Judge tokens.
    pub judge_tokens: u64,
    /// Calls answered from the response cache (review and judge).
    pub cache_hits: u64,
    /// Calls sent to an endpoint (review and judge).
    pub sent: u64,
}

impl Cost {
    fn add(&mut self, other: Cost) {
        self.review_tokens += other.review_tokens;
        self.review_calls += other.review_calls;
        self.judge_questions += other.judge_questions;
        self.judge_tokens += other.judge_tokens;
        self.cache_hits += other.cache_hits;
        self.sent += other.sent;
    }
}

/// One case of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseResult {
    /// The case id.
    pub id: String,
    /// How it ended.
    pub status: CaseStatus,
    /// The review's outcome (`findings`, `no-findings`, `incomplete`, ...), when it ran.
    pub outcome: Option<String>,
    /// Why it was not scored.
    pub message: Option<String>,
    /// A case without golden comments.
    pub clean_change: bool,
    /// Golden comments.
    pub golden: u32,
    /// Published findings.
    pub findings: u32,
    /// Finding groups after duplicates were grouped.
    pub groups: u32,
    /// Changed lines of the reviewed change (added + removed).
    pub changed_lines: u64,
    /// Judge-matched counts (`null` unless scored).
    pub counts: Option<CaseCounts>,
    /// Location-matched counts under `all` (`null` unless every golden comment names a
    /// path).
    pub location: Option<Counts>,
    /// Cost.
    pub cost: Cost,
}

/// Clean-change figures over the clean cases of a run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanRate {
    /// Scored clean cases.
    pub changes: u32,
    /// Findings published on them (all false positives).
    pub findings: u32,
    /// Their changed lines.
    pub changed_lines: u64,
    /// Findings per change.
    pub per_change: f64,
    /// Findings per changed line (`null` without changed lines).
    pub per_changed_line: Option<f64>,
}

/// Figures of one run over its scored cases.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Overall {
    /// Cases in the run.
    pub cases: u32,
    /// Scored cases.
    pub scored: u32,
    /// Ids of cases left out of every figure (incomplete or failed).
    pub not_scored: Vec<String>,
    /// Judge-matched metrics per profile (micro average: counts summed over cases).
    pub profiles: BTreeMap<Profile, Metrics>,
    /// Judge-matched metrics per severity (profile `all`).
    pub severities: BTreeMap<Severity, Metrics>,
    /// Findings folded into another finding's group before scoring (findings − groups).
    pub grouped: u32,
    /// Groups that only repeated a golden comment an earlier group had matched.
    pub duplicates: u32,
    /// Location-matched metrics over the cases that carry locations.
    pub location: Option<Metrics>,
    /// Cases in the location figure.
    pub location_cases: u32,
    /// Clean-change figures, when the run had clean cases.
    pub clean: Option<CleanRate>,
    /// Cost of every case, scored or not.
    pub cost: Cost,
}

/// One run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunResult {
    /// 1-based run number.
    pub run: u32,
    /// Per case, in input order.
    pub cases: Vec<CaseResult>,
    /// The run's figures.
    pub overall: Overall,
}

/// Mean and spread of a profile's figures over the runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileSpread {
    /// Precision.
    pub precision: Option<Spread>,
    /// Recall.
    pub recall: Option<Spread>,
    /// F1.
    pub f1: Option<Spread>,
    /// F-beta.
    pub f_beta: Option<Spread>,
}

/// The whole results document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvalResults {
    /// [`RESULTS_SCHEMA_VERSION`].
    pub schema_version: String,
    /// What was run.
    pub config: RunConfig,
    /// Every run.
    pub runs: Vec<RunResult>,
    /// Mean and spread per profile over the runs.
    pub summary: BTreeMap<Profile, ProfileSpread>,
}

/// The figures of one run. Rule: only scored cases count; incomplete and failed cases
/// are named in `notScored` and never count as zero findings; location figures use the
/// scored cases whose golden comments all name a path; clean-change figures use the
/// scored cases without golden comments.
pub fn overall(cases: &[CaseResult], beta: f64) -> Overall {
    let scored: Vec<&CaseResult> = cases
        .iter()
        .filter(|c| c.status == CaseStatus::Scored)
        .collect();
    let total = sum_counts(scored.iter().filter_map(|c| c.counts.as_ref()));
    let located: Vec<Counts> = scored.iter().filter_map(|c| c.location).collect();
    let location = (!located.is_empty()).then(|| {
        let mut sum = Counts::default();
        for c in &located {
            sum.add(*c);
        }
        sum.metrics(beta)
    });
    let clean: Vec<&&CaseResult> = scored.iter().filter(|c| c.clean_change).collect();
    let clean = (!clean.is_empty()).then(|| {
        let findings: u32 = clean.iter().map(|c| c.findings).sum();
        let changed_lines: u64 = clean.iter().map(|c| c.changed_lines).sum();
        CleanRate {
            changes: clean.len() as u32,
            findings,
            changed_lines,
            per_change: f64::from(findings) / clean.len() as f64,
            per_changed_line: (changed_lines > 0)
                .then(|| f64::from(findings) / changed_lines as f64),
        }
    });
    let mut cost = Cost::default();
    for c in cases {
        cost.add(c.cost);
    }
    Overall {
        cases: cases.len() as u32,
        scored: scored.len() as u32,
        not_scored: cases
            .iter()
            .filter(|c| c.status != CaseStatus::Scored)
            .map(|c| c.id.clone())
            .collect(),
        profiles: Profile::ALL
            .into_iter()
            .map(|p| {
                (
                    p,
                    total
                        .profiles
                        .get(&p)
                        .copied()
                        .unwrap_or_default()
                        .metrics(beta),
                )
            })
            .collect(),
        severities: Severity::ALL
            .into_iter()
            .map(|s| {
                (
                    s,
                    total
                        .severities
                        .get(&s)
                        .copied()
                        .unwrap_or_default()
                        .metrics(beta),
                )
            })
            .collect(),
        grouped: scored
            .iter()
            .map(|c| c.findings.saturating_sub(c.groups))
            .sum(),
        duplicates: total.duplicates,
        location,
        location_cases: located.len() as u32,
        clean,
        cost,
    }
}

/// Mean and spread per profile over runs.
pub fn summarize(runs: &[RunResult]) -> BTreeMap<Profile, ProfileSpread> {
    Profile::ALL
        .into_iter()
        .map(|p| {
            let pick = |f: fn(&Metrics) -> Option<f64>| -> Option<Spread> {
                let values: Vec<Option<f64>> = runs
                    .iter()
                    .map(|r| r.overall.profiles.get(&p).and_then(f))
                    .collect();
                spread(&values)
            };
            (
                p,
                ProfileSpread {
                    precision: pick(|m| m.precision),
                    recall: pick(|m| m.recall),
                    f1: pick(|m| m.f1),
                    f_beta: pick(|m| m.f_beta),
                },
            )
        })
        .collect()
}

fn num(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_owned(), |v| format!("{v:.3}"))
}

fn csv_num(value: Option<f64>) -> String {
    value.map_or_else(String::new, |v| format!("{v:.6}"))
}

/// Markdown cells and labels must not break the table.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// The Markdown summary: per case (profile `all`), per profile, per severity, location,
/// clean changes, and with several runs the mean ± standard deviation.
pub fn markdown(results: &EvalResults) -> String {
    let mut out = String::new();
    let beta = results.config.beta;
    let _ = writeln!(
        out,
        "# vouch eval\n\nReviewer `{}`, judge `{}`, manifest `{}`, β = {beta}, {} run(s).\n",
        cell(&results.config.reviewer_model),
        cell(results.config.judge_model.as_deref().unwrap_or("none")),
        cell(&results.config.manifest),
        results.config.repeat
    );
    for run in &results.runs {
        write_run(&mut out, run, beta, results.runs.len() > 1);
    }
    if results.runs.len() > 1 {
        let _ = writeln!(out, "## Over {} runs (mean ± sd)\n", results.runs.len());
        let _ = writeln!(
            out,
            "| profile | precision | recall | F1 | Fβ |\n|---|---|---|---|---|"
        );
        let show = |s: &Option<Spread>| {
            s.map_or_else(
                || "–".to_owned(),
                |s| format!("{:.3} ± {:.3}", s.mean, s.std_dev),
            )
        };
        for (p, s) in &results.summary {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                p.as_str(),
                show(&s.precision),
                show(&s.recall),
                show(&s.f1),
                show(&s.f_beta)
            );
        }
        out.push('\n');
    }
    out
}

fn write_run(out: &mut String, run: &RunResult, beta: f64, heading: bool) {
    if heading {
        let _ = writeln!(out, "## Run {}\n", run.run);
    }
    write_cases(out, run, beta);
    write_overall(out, &run.overall);
    out.push('\n');
}

/// The run's table of cases: status, counts, metrics (all comments) and cost.
fn write_cases(out: &mut String, run: &RunResult, beta: f64) {
    let _ = writeln!(
        out,
        "| case | status | golden | findings | groups | TP | FP | FN | precision | recall | F1 | Fβ | calls | cache hits | tokens |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for case in &run.cases {
        let all = case
            .counts
            .as_ref()
            .and_then(|c| c.profiles.get(&Profile::All))
            .map(|c| c.metrics(beta));
        let counts = |f: fn(&Counts) -> u32| {
            all.map_or_else(|| "–".to_owned(), |m| f(&m.counts).to_string())
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(&case.id),
            case.status.as_str(),
            case.golden,
            case.findings,
            case.groups,
            counts(|c| c.tp),
            counts(|c| c.fp),
            counts(|c| c.fn_),
            num(all.and_then(|m| m.precision)),
            num(all.and_then(|m| m.recall)),
            num(all.and_then(|m| m.f1)),
            num(all.and_then(|m| m.f_beta)),
            case.cost.review_calls + case.cost.judge_questions,
            case.cost.cache_hits,
            case.cost.review_tokens + case.cost.judge_tokens
        );
    }
}

/// The run's overall figures: what was scored, the profile, severity and location
/// metrics, and the clean-change rate.
fn write_overall(out: &mut String, o: &Overall) {
    let _ = writeln!(
        out,
        "\nScored {} of {} case(s); {} duplicate finding(s) grouped with another; {} group(s) repeating an already matched comment.",
        o.scored, o.cases, o.grouped, o.duplicates
    );
    if !o.not_scored.is_empty() {
        let names: Vec<String> = o.not_scored.iter().map(|n| cell(n)).collect();
        let _ = writeln!(
            out,
            "Not scored (incomplete or failed, left out of every figure): {}.",
            names.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "\n| profile | TP | FP | FN | precision | recall | F1 | Fβ |\n|---|---|---|---|---|---|---|---|"
    );
    let mut rows: Vec<(String, Metrics)> = o
        .profiles
        .iter()
        .map(|(p, m)| (p.as_str().to_owned(), *m))
        .collect();
    rows.extend(
        o.severities
            .iter()
            .map(|(s, m)| (format!("severity {}", s.as_str()), *m)),
    );
    if let Some(m) = o.location {
        rows.push((format!("location ({} case(s))", o.location_cases), m));
    }
    for (label, m) in rows {
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {} | {} | {} | {} | {} |",
            m.counts.tp,
            m.counts.fp,
            m.counts.fn_,
            num(m.precision),
            num(m.recall),
            num(m.f1),
            num(m.f_beta)
        );
    }
    if let Some(clean) = o.clean {
        let _ = writeln!(
            out,
            "\nClean changes: {} finding(s) on {} change(s) = {:.3} per change, {} per changed line ({} lines).",
            clean.findings,
            clean.changes,
            clean.per_change,
            num(clean.per_changed_line),
            clean.changed_lines
        );
    }
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// CSV: one row per run, case (or `(overall)`) and profile.
pub fn csv(results: &EvalResults) -> String {
    let beta = results.config.beta;
    let mut out = String::from(
        "run,case,status,profile,golden,findings,groups,tp,fp,fn,precision,recall,f1,f_beta,review_calls,judge_questions,cache_hits,tokens\n",
    );
    for run in &results.runs {
        for case in &run.cases {
            for p in Profile::ALL {
                let m = case
                    .counts
                    .as_ref()
                    .and_then(|c| c.profiles.get(&p))
                    .map(|c| c.metrics(beta));
                let count = |f: fn(&Counts) -> u32| {
                    m.map_or_else(String::new, |m| f(&m.counts).to_string())
                };
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    run.run,
                    csv_field(&case.id),
                    case.status.as_str(),
                    p.as_str(),
                    case.golden,
                    case.findings,
                    case.groups,
                    count(|c| c.tp),
                    count(|c| c.fp),
                    count(|c| c.fn_),
                    csv_num(m.and_then(|m| m.precision)),
                    csv_num(m.and_then(|m| m.recall)),
                    csv_num(m.and_then(|m| m.f1)),
                    csv_num(m.and_then(|m| m.f_beta)),
                    case.cost.review_calls,
                    case.cost.judge_questions,
                    case.cost.cache_hits,
                    case.cost.review_tokens + case.cost.judge_tokens
                );
            }
        }
        for (p, m) in &run.overall.profiles {
            let _ = writeln!(
                out,
                "{},(overall),scored,{},,,,{},{},{},{},{},{},{},{},{},{},{}",
                run.run,
                p.as_str(),
                m.counts.tp,
                m.counts.fp,
                m.counts.fn_,
                csv_num(m.precision),
                csv_num(m.recall),
                csv_num(m.f1),
                csv_num(m.f_beta),
                run.overall.cost.review_calls,
                run.overall.cost.judge_questions,
                run.overall.cost.cache_hits,
                run.overall.cost.review_tokens + run.overall.cost.judge_tokens
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str, status: CaseStatus, all: Counts, clean: bool, findings: u32) -> CaseResult {
        let mut counts = CaseCounts::default();
        for p in Profile::ALL {
            counts.profiles.insert(p, all);
        }
        CaseResult {
            id: id.into(),
            status,
            outcome: None,
            message: None,
            clean_change: clean,
            golden: all.tp + all.fn_,
            findings,
            groups: findings,
            changed_lines: 40,
            counts: (status == CaseStatus::Scored).then_some(counts),
            location: None,
            cost: Cost {
                review_calls: 3,
                ..Cost::default()
            },
        }
    }

    #[test]
    fn overall_leaves_unscored_cases_out_and_names_them() {
        let cases = vec![
            case(
                "a",
                CaseStatus::Scored,
                Counts {
                    tp: 1,
                    fp: 1,
                    fn_: 0,
                },
                false,
                2,
            ),
            case(
                "b",
                CaseStatus::Incomplete,
                Counts {
                    tp: 0,
                    fp: 0,
                    fn_: 5,
                },
                false,
                0,
            ),
            case(
                "c",
                CaseStatus::Scored,
                Counts {
                    tp: 0,
                    fp: 2,
                    fn_: 0,
                },
                true,
                2,
            ),
        ];
        let o = overall(&cases, 1.0);
        assert_eq!((o.cases, o.scored), (3, 2));
        assert_eq!(o.not_scored, ["b"]);
        assert_eq!(
            o.profiles[&Profile::All].counts,
            Counts {
                tp: 1,
                fp: 3,
                fn_: 0
            }
        );
        assert_eq!(o.profiles[&Profile::All].precision, Some(0.25));
        let clean = o.clean.unwrap();
        assert_eq!(
            (clean.changes, clean.findings, clean.per_change),
            (1, 2, 2.0)
        );
        assert_eq!(clean.per_changed_line, Some(2.0 / 40.0));
        assert_eq!(o.cost.review_calls, 9, "cost counts every case");
    }

    #[test]
    fn renderings_escape_and_quote() {
        let cases = vec![case(
            "a|b, \"c\"",
            CaseStatus::Scored,
            Counts {
                tp: 1,
                fp: 0,
                fn_: 1,
            },
            false,
            1,
        )];
        let run = RunResult {
            run: 1,
            overall: overall(&cases, 2.0),
            cases,
        };
        let results = EvalResults {
            schema_version: RESULTS_SCHEMA_VERSION.into(),
            config: RunConfig {
                reviewer_model: "r".into(),
                judge_model: Some("j".into()),
                manifest: "m".into(),
                beta: 2.0,
                repeat: 1,
                cache: None,
                vouch_version: "0".into(),
            },
            summary: summarize(std::slice::from_ref(&run)),
            runs: vec![run],
        };
        let md = markdown(&results);
        assert!(md.contains("| a\\|b, \"c\" | scored |"), "{md}");
        let csv = csv(&results);
        assert!(csv.contains("1,\"a|b, \"\"c\"\"\",scored,all,"), "{csv}");
        assert_eq!(csv.lines().count(), 1 + 3 + 3);
    }
}
