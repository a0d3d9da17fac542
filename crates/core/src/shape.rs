//! A reply against its output contract's shape: which fields a model may omit (and what
//! they then are), and where a reply departs from the contract (a JSON pointer and what
//! is wrong there), before any plugin reads it.
//!
//! Models routinely leave out empty arrays and optional text. Such an omission carries no
//! decision, so it takes its default; a field that carries a decision (a receipt, a
//! candidate's location, a verdict) must be present. Unknown keys and wrong types are
//! contract violations, which go to repair.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The value an omitted field takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Omitted {
    /// `[]`.
    EmptyArray,
    /// `""`.
    EmptyString,
    /// `null`.
    Null,
    /// A fixed string.
    Text(&'static str),
}

impl Omitted {
    fn value(self) -> Value {
        match self {
            Omitted::EmptyArray => Value::Array(vec![]),
            Omitted::EmptyString => Value::String(String::new()),
            Omitted::Null => Value::Null,
            Omitted::Text(t) => Value::String(t.to_string()),
        }
    }
}

/// Rule (contract, "omitted empty arrays and optional fields take their defaults"): the
/// fields a reply may leave out, as JSON pointers (`*` stands for any array index), and
/// the value each then takes. Every other field the contract requires carries a
/// decision — a coverage receipt, a candidate's location, severity, area and claim, a
/// verdict and the candidate it decides — and its absence is a contract violation.
pub const OMITTABLE: &[(&str, Omitted)] = &[
    ("/candidates", Omitted::EmptyArray),
    ("/dismissedConcerns", Omitted::EmptyArray),
    ("/summary", Omitted::EmptyString),
    ("/candidates/*/evidence", Omitted::EmptyString),
    ("/candidates/*/revision", Omitted::Text("head")),
    ("/decisions/*/evidence", Omitted::EmptyString),
    ("/decisions/*/citations", Omitted::EmptyArray),
    ("/decisions/*/finding", Omitted::Null),
];

/// Most problems one check reports (the first ones, in document order).
pub const MAX_SHAPE_PROBLEMS: usize = 8;

/// Where a reply departs from its contract's shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeProblem {
    /// A key the contract does not define (the contract forbids other keys).
    #[error("{pointer}: unknown key; the contract allows only the keys it lists")]
    UnknownKey {
        /// JSON pointer of the key.
        pointer: String,
    },
    /// A field that carries a decision is absent.
    #[error("{pointer}: missing required field")]
    Missing {
        /// JSON pointer of the absent field.
        pointer: String,
    },
    /// A value of another JSON type than the contract's.
    #[error("{pointer}: expected {expected}, found {found}")]
    WrongType {
        /// JSON pointer of the value.
        pointer: String,
        /// The type(s) the contract allows, e.g. `integer` or `string or null`.
        expected: String,
        /// The JSON type found.
        found: &'static str,
    },
}

impl ShapeProblem {
    /// The JSON pointer of the problem.
    pub fn pointer(&self) -> &str {
        match self {
            ShapeProblem::UnknownKey { pointer }
            | ShapeProblem::Missing { pointer }
            | ShapeProblem::WrongType { pointer, .. } => pointer,
        }
    }
}

/// Rule (contract shape): `reply` checked against `schema` (the contract's JSON Schema:
/// `type`, `properties`, `required`, `additionalProperties: false`, `items`). Omitted
/// fields listed in [`OMITTABLE`] take their value; the reply with them filled in is
/// returned. Otherwise the problems in document order, at most [`MAX_SHAPE_PROBLEMS`]:
/// an unknown key, an absent required field, a value of the wrong JSON type. Value
/// bounds and enumerations are the plugin parser's to check.
pub fn conform(reply: &Value, schema: &Value) -> Result<Value, Vec<ShapeProblem>> {
    let mut filled = reply.clone();
    let mut problems = Vec::new();
    walk(&mut filled, schema, &mut String::new(), &mut problems);
    if problems.is_empty() {
        Ok(filled)
    } else {
        problems.truncate(MAX_SHAPE_PROBLEMS);
        Err(problems)
    }
}

/// The JSON type name of `value` as JSON Schema spells it (`integer` for whole numbers).
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The types `schema` allows (none: any).
fn allowed_types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    }
}

fn fits(found: &str, allowed: &[&str]) -> bool {
    allowed.is_empty()
        || allowed
            .iter()
            .any(|t| *t == found || (*t == "number" && found == "integer"))
}

fn walk(value: &mut Value, schema: &Value, at: &mut String, problems: &mut Vec<ShapeProblem>) {
    if problems.len() >= MAX_SHAPE_PROBLEMS {
        return;
    }
    let allowed = allowed_types(schema);
    let found = type_name(value);
    if !fits(found, &allowed) {
        problems.push(ShapeProblem::WrongType {
            pointer: pointer_or_root(at),
            expected: allowed.join(" or "),
            found,
        });
        return;
    }
    match value {
        Value::Object(map) => object(map, schema, at, problems),
        Value::Array(items) => {
            let Some(item_schema) = schema.get("items") else {
                return;
            };
            for (i, item) in items.iter_mut().enumerate() {
                let len = at.len();
                at.push_str(&format!("/{i}"));
                walk(item, item_schema, at, problems);
                at.truncate(len);
            }
        }
        _ => {}
    }
}

fn object(
    map: &mut Map<String, Value>,
    schema: &Value,
    at: &mut String,
    problems: &mut Vec<ShapeProblem>,
) {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for key in map.keys() {
        if closed && !properties.contains_key(key) {
            problems.push(ShapeProblem::UnknownKey {
                pointer: format!("{at}/{}", escape(key)),
            });
        }
    }
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect::<Vec<_>>())
        .unwrap_or_default();
    for key in required {
        if map.contains_key(key) {
            continue;
        }
        let pointer = format!("{at}/{}", escape(key));
        match omitted_value(&pointer) {
            Some(default) => {
                map.insert(key.to_string(), default.value());
            }
            None => problems.push(ShapeProblem::Missing { pointer }),
        }
    }
    for (key, property) in properties {
        if let Some(v) = map.get_mut(key) {
            let len = at.len();
            at.push('/');
            at.push_str(&escape(key));
            walk(v, property, at, problems);
            at.truncate(len);
        }
    }
}

fn pointer_or_root(at: &str) -> String {
    if at.is_empty() {
        "/".to_string()
    } else {
        at.to_string()
    }
}

/// A key as a JSON pointer token (RFC 6901: `~` as `~0`, `/` as `~1`).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The value an omitted field at `pointer` takes, if [`OMITTABLE`] lists it.
pub fn omitted_value(pointer: &str) -> Option<Omitted> {
    OMITTABLE
        .iter()
        .find(|(pattern, _)| pointer_matches(pattern, pointer))
        .map(|(_, v)| *v)
}

/// True when `pointer` matches `pattern`, `*` standing for one array index.
fn pointer_matches(pattern: &str, pointer: &str) -> bool {
    let p: Vec<&str> = pattern.split('/').collect();
    let q: Vec<&str> = pointer.split('/').collect();
    p.len() == q.len()
        && p.iter().zip(&q).all(|(a, b)| {
            a == b || (*a == "*" && !b.is_empty() && b.bytes().all(|c| c.is_ascii_digit()))
        })
}

/// What was wrong with a reply that went to repair, or with a receipt that went to a
/// coverage retry: kept per stage in the report so a user trying a model sees what to
/// fix. Never carries source text; `message` is bounded ([`ReplyIssue::MAX_MESSAGE`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplyIssue {
    /// What the host did about it.
    pub step: IssueStep,
    /// JSON pointer into the reply, when the problem has a place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// The parser's or the contract check's message, bounded.
    pub message: String,
}

/// Which step a reply's problem led to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum IssueStep {
    /// The reply went to its one isolated repair.
    Repair,
    /// The repair's own reply was still not valid (the stage failed).
    RepairFailed,
    /// The receipt did not match the expected list: the stage was retried once.
    CoverageRetry,
}

impl ReplyIssue {
    /// Most characters of a message kept.
    pub const MAX_MESSAGE: usize = 300;

    /// An issue, its message cut at [`ReplyIssue::MAX_MESSAGE`] characters (with `…`)
    /// and its control characters made spaces.
    pub fn new(step: IssueStep, pointer: Option<String>, message: &str) -> ReplyIssue {
        let mut text: String = message
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(Self::MAX_MESSAGE)
            .collect();
        if message.chars().count() > Self::MAX_MESSAGE {
            text.push('…');
        }
        ReplyIssue {
            step,
            pointer: pointer.map(|p| p.chars().take(Self::MAX_MESSAGE).collect()),
            message: text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn contract() -> Value {
        let obj = |props: Value| {
            let required: Vec<String> = props.as_object().unwrap().keys().cloned().collect();
            json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
        };
        let candidate = obj(json!({
            "path": {"type": "string"}, "startLine": {"type": "integer"},
            "endLine": {"type": "integer"}, "revision": {"type": "string"},
            "severity": {"type": "string"}, "area": {"type": "string"},
            "claim": {"type": "string"}, "evidence": {"type": "string"},
        }));
        obj(json!({
            "candidates": {"type": "array", "items": candidate},
            "coverage": obj(json!({
                "complete": {"type": "boolean"},
                "reviewedFiles": {"type": "array", "items": {"type": "string"}},
            })),
            "summary": {"type": "string"},
            "dismissedConcerns": {"type": "array", "items": {"type": "object"}},
        }))
    }

    fn receipt() -> Value {
        json!({"complete": true, "reviewedFiles": ["a.rs"]})
    }

    fn candidate() -> Value {
        json!({"path": "a.rs", "startLine": 1, "endLine": 2, "severity": "low",
               "area": "correctness", "claim": "c"})
    }

    #[test]
    fn omitted_optional_fields_take_their_defaults_and_decisions_stay_required() {
        type Case = (&'static str, Value, Result<Value, Vec<ShapeProblem>>);
        let missing = |p: &str| ShapeProblem::Missing { pointer: p.into() };
        let cases: Vec<Case> = vec![
            (
                "only the receipt",
                json!({"coverage": receipt()}),
                Ok(
                    json!({"coverage": receipt(), "candidates": [], "summary": "",
                          "dismissedConcerns": []}),
                ),
            ),
            (
                "a candidate without evidence or revision",
                json!({"coverage": receipt(), "candidates": [candidate()], "summary": "s",
                       "dismissedConcerns": []}),
                Ok({
                    let mut c = candidate();
                    c["evidence"] = json!("");
                    c["revision"] = json!("head");
                    json!({"coverage": receipt(), "candidates": [c], "summary": "s",
                           "dismissedConcerns": []})
                }),
            ),
            ("no receipt", json!({}), Err(vec![missing("/coverage")])),
            (
                "a receipt without its list",
                json!({"coverage": {"complete": true}}),
                Err(vec![missing("/coverage/reviewedFiles")]),
            ),
            (
                "a candidate without its claim",
                json!({"coverage": receipt(), "candidates": [{"path": "a.rs", "startLine": 1,
                       "endLine": 1, "severity": "low", "area": "correctness"}]}),
                Err(vec![missing("/candidates/0/claim")]),
            ),
            (
                "an unknown key",
                json!({"coverage": receipt(), "notes": "x"}),
                Err(vec![ShapeProblem::UnknownKey {
                    pointer: "/notes".into(),
                }]),
            ),
            (
                "a line as text",
                json!({"coverage": receipt(), "candidates": [{"path": "a.rs", "startLine": "3",
                       "endLine": 3, "severity": "low", "area": "correctness", "claim": "c"}]}),
                Err(vec![ShapeProblem::WrongType {
                    pointer: "/candidates/0/startLine".into(),
                    expected: "integer".into(),
                    found: "string",
                }]),
            ),
            (
                "candidates as null",
                json!({"coverage": receipt(), "candidates": null}),
                Err(vec![ShapeProblem::WrongType {
                    pointer: "/candidates".into(),
                    expected: "array".into(),
                    found: "null",
                }]),
            ),
            (
                "not an object",
                json!([1]),
                Err(vec![ShapeProblem::WrongType {
                    pointer: "/".into(),
                    expected: "object".into(),
                    found: "array",
                }]),
            ),
        ];
        for (name, reply, want) in cases {
            assert_eq!(conform(&reply, &contract()), want, "{name}");
        }
    }

    #[test]
    fn pointers_match_only_array_indices_for_stars() {
        for (pattern, pointer, want) in [
            ("/candidates/*/evidence", "/candidates/3/evidence", true),
            ("/candidates/*/evidence", "/candidates/x/evidence", false),
            ("/candidates/*/evidence", "/candidates//evidence", false),
            ("/candidates", "/candidates/0", false),
            ("/summary", "/summary", true),
        ] {
            assert_eq!(
                pointer_matches(pattern, pointer),
                want,
                "{pattern} {pointer}"
            );
        }
    }

    #[test]
    fn an_issue_message_is_bounded_and_printable() {
        let issue = ReplyIssue::new(IssueStep::Repair, None, &format!("a\nb{}", "x".repeat(400)));
        assert_eq!(issue.message.chars().count(), ReplyIssue::MAX_MESSAGE + 1);
        assert!(issue.message.starts_with("a b"));
        assert!(issue.message.ends_with('…'));
    }
}
