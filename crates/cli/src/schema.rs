//! `vouch schema NAME`: prints one of the JSON Schemas vouch checks its documents against,
//! byte-identical to the committed schema file, so a pipeline can validate a saved
//! document with its own tools.

use clap::ValueEnum;

/// The documents vouch writes or checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SchemaName {
    /// `vouch.review-report/2`: the JSON review report (`--format json`).
    Report,
    /// `vouch.review-failure/1`: the JSON document of a run that ended without a report.
    Failure,
    /// A review final report, as `vouch validate-report` checks it.
    FinalReport,
}

/// The schema's text, as committed under `crates/*/schema/`.
pub(crate) fn text(name: SchemaName) -> String {
    match name {
        SchemaName::Report => vouch_report::report_schema_text(),
        SchemaName::Failure => vouch_report::failure_schema_text(),
        SchemaName::FinalReport => vouch_final_report::json_schema_text(),
    }
}
