//! Categories, scoring profiles and severities of golden comments and findings.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use vouch_core::Area;

/// What kind of issue a golden comment (or a finding) is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Wrong behaviour.
    Bug,
    /// A vulnerability.
    Security,
    /// Races, deadlocks, ordering.
    Concurrency,
    /// Data loss or corruption.
    Data,
    /// A broken or incompatible interface.
    Api,
    /// Performance.
    Perf,
    /// Missing or wrong tests.
    TestGap,
    /// Wrong or missing documentation.
    DocDefect,
    /// Style and conventions.
    Style,
    /// A possible issue the reviewer could not establish.
    Speculative,
}

impl Category {
    /// Every category, in profile order.
    pub const ALL: [Category; 10] = [
        Category::Bug,
        Category::Security,
        Category::Concurrency,
        Category::Data,
        Category::Api,
        Category::Perf,
        Category::TestGap,
        Category::DocDefect,
        Category::Style,
        Category::Speculative,
    ];

    /// The wire spelling (`bug`, `test_gap`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Bug => "bug",
            Category::Security => "security",
            Category::Concurrency => "concurrency",
            Category::Data => "data",
            Category::Api => "api",
            Category::Perf => "perf",
            Category::TestGap => "test_gap",
            Category::DocDefect => "doc_defect",
            Category::Style => "style",
            Category::Speculative => "speculative",
        }
    }

    /// The category of a vouch finding's review `area`. Rule: each area maps as vouch's
    /// review-area table reads: `correctness`, `failure-paths`, `validation`,
    /// `operations` → bug; `contracts` → api; `resources` → perf; `conventions` → style;
    /// `concurrency` and `security` as named.
    pub fn of_area(area: Area) -> Category {
        match area {
            Area::Correctness | Area::FailurePaths | Area::Validation | Area::Operations => {
                Category::Bug
            }
            Area::Contracts => Category::Api,
            Area::Concurrency => Category::Concurrency,
            Area::Security => Category::Security,
            Area::Resources => Category::Perf,
            Area::Conventions => Category::Style,
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Category {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let wanted = text.trim().to_ascii_lowercase().replace('-', "_");
        Category::ALL
            .into_iter()
            .find(|c| c.as_str() == wanted)
            .ok_or_else(|| {
                let known: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
                format!(
                    "unknown category {text:?}; expected one of {}",
                    known.join(", ")
                )
            })
    }
}

/// A scoring profile: which categories count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// bug, security, concurrency, data, api.
    Strict,
    /// strict + perf, test_gap, doc_defect.
    Core,
    /// core + style, speculative.
    All,
}

impl Profile {
    /// Every profile, narrowest first.
    pub const ALL: [Profile; 3] = [Profile::Strict, Profile::Core, Profile::All];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Strict => "strict",
            Profile::Core => "core",
            Profile::All => "all",
        }
    }

    /// Rule: strict holds bug, security, concurrency, data and api; core adds perf,
    /// test_gap and doc_defect; all adds style and speculative.
    pub fn includes(self, category: Category) -> bool {
        use Category::*;
        let strict = matches!(category, Bug | Security | Concurrency | Data | Api);
        let core = strict || matches!(category, Perf | TestGap | DocDefect);
        match self {
            Profile::Strict => strict,
            Profile::Core => core,
            Profile::All => true,
        }
    }
}

/// Severity of a golden comment or a finding: the one severity type of vouch's findings.
pub use vouch_core::Severity;

/// A golden comment's severity as benchmarks write it: case-insensitive (the public
/// benchmark writes `High`); `moderate` reads as medium, `info`, `nit` and `minor` as low.
///
/// # Errors
/// A message naming the unknown severity and the expected ones.
pub fn golden_severity(text: &str) -> Result<Severity, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "critical" => Ok(Severity::Critical),
        "high" => Ok(Severity::High),
        "medium" | "moderate" => Ok(Severity::Medium),
        "low" | "info" | "nit" | "minor" => Ok(Severity::Low),
        _ => Err(format!(
            "unknown severity {text:?}; expected critical, high, medium or low"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_nest_as_documented() {
        let table: [(Category, [bool; 3]); 10] = [
            (Category::Bug, [true, true, true]),
            (Category::Security, [true, true, true]),
            (Category::Concurrency, [true, true, true]),
            (Category::Data, [true, true, true]),
            (Category::Api, [true, true, true]),
            (Category::Perf, [false, true, true]),
            (Category::TestGap, [false, true, true]),
            (Category::DocDefect, [false, true, true]),
            (Category::Style, [false, false, true]),
            (Category::Speculative, [false, false, true]),
        ];
        for (category, expected) in table {
            let got = Profile::ALL.map(|p| p.includes(category));
            assert_eq!(got, expected, "{category}");
        }
    }

    #[test]
    fn areas_map_to_categories() {
        let table = [
            (Area::Correctness, Category::Bug),
            (Area::Contracts, Category::Api),
            (Area::FailurePaths, Category::Bug),
            (Area::Concurrency, Category::Concurrency),
            (Area::Security, Category::Security),
            (Area::Resources, Category::Perf),
            (Area::Operations, Category::Bug),
            (Area::Validation, Category::Bug),
            (Area::Conventions, Category::Style),
        ];
        assert_eq!(table.map(|(area, _)| area), Area::ALL);
        for (area, expected) in table {
            assert_eq!(Category::of_area(area), expected, "{area}");
        }
    }

    #[test]
    fn spellings_round_trip_and_unknowns_are_named() {
        for c in Category::ALL {
            assert_eq!(c.as_str().parse::<Category>(), Ok(c));
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
        }
        assert!("bugs".parse::<Category>().unwrap_err().contains("\"bugs\""));
        assert_eq!(golden_severity("High"), Ok(Severity::High));
        assert!(golden_severity("urgent").is_err());
    }
}
