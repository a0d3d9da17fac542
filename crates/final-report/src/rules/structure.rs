//! Rules 1-3: the report's shape.

use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

use super::Ctx;
use crate::model::{DiffReviewStatus, ValidationStatus};
use crate::narrative::words;
use crate::violation::{Violation, ViolationCode, escape_token};

fn validator() -> &'static Validator {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        jsonschema::validator_for(&crate::json_schema()).expect("the generated schema compiles")
    })
}

/// Schema violations of the report, split into rule 1 (fields) and rule 3 (the nine
/// mutation categories).
pub(super) fn schema_violations(report: &Value) -> Vec<Violation> {
    let schema = crate::json_schema();
    let mut out = Vec::new();
    for error in validator().iter_errors(report) {
        map_error(&error, &schema, &mut out);
    }
    out
}

/// Whether a pointer is the ledger itself or one of its categories.
fn is_ledger_level(pointer: &str) -> bool {
    pointer == "/mutations"
        || pointer
            .strip_prefix("/mutations/")
            .is_some_and(|rest| !rest.contains('/'))
}

fn map_error(error: &ValidationError<'_>, schema: &Value, out: &mut Vec<Violation>) {
    let path = error.instance_path().as_str().to_owned();
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            out.push(missing(
                &path,
                property.as_str().unwrap_or_default(),
                schema,
            ));
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            // A legacy key is named by rule 2.
            let names = unexpected.iter().filter(|name| !is_legacy_key(name));
            out.extend(names.map(|name| unknown(&path, name)));
        }
        ValidationErrorKind::AnyOf { .. } | ValidationErrorKind::OneOfNotValid { .. }
            if error.instance().is_string() && !allowed_values(schema, &path).is_empty() =>
        {
            let allowed = allowed_values(schema, &path);
            out.push(not_allowed(&path, error.instance(), &allowed, schema));
        }
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            // Report the branch the value was closest to (fewest errors; on a tie, the
            // last branch, which is the applicable value rather than `notApplicable`);
            // a value that is not null is never judged by an optional field's `null`
            // branch ("is not of type null" would name no real problem).
            let not_null = !error.instance().is_null();
            let best = context
                .iter()
                .enumerate()
                .min_by_key(|(i, errs)| (not_null && only_null(errs), errs.len(), usize::MAX - i))
                .map(|(_, errs)| errs);
            match best {
                Some(errs) if !errs.is_empty() => {
                    for e in errs {
                        map_error(e, schema, out);
                    }
                }
                _ => out.push(invalid(&path, error, schema)),
            }
        }
        _ => out.push(invalid_value(&path, error, schema)),
    }
}

/// Whether a branch failed only for not being null (an optional field's `null` branch).
fn only_null(errors: &[ValidationError<'_>]) -> bool {
    !errors.is_empty()
        && errors.iter().all(|e| {
            matches!(
                e.kind(),
                ValidationErrorKind::Type {
                    kind: jsonschema::error::TypeKind::Single(jsonschema::JsonType::Null)
                }
            )
        })
}

/// A required key that is missing: a mutation category (rule 3) or a field (rule 1).
fn missing(path: &str, name: &str, schema: &Value) -> Violation {
    let pointer = format!("{path}/{}", escape_token(name));
    if pointer == "/mutations" {
        return Violation::new(
            ViolationCode::MutationLedgerNotExplicit,
            pointer,
            "the mutation ledger is missing; it must list all nine categories explicitly, `[]` when empty",
        );
    }
    if is_ledger_level(&pointer) {
        let message = format!(
            "mutation category `{name}` is missing; every category must be an explicit list, `[]` when empty"
        );
        return Violation::new(ViolationCode::MutationLedgerNotExplicit, pointer, message);
    }
    let what = describe(schema, &pointer)
        .map(|d| format!(" ({d})"))
        .unwrap_or_default();
    let message = format!("required field `{pointer}` is missing{what}");
    Violation::new(ViolationCode::MissingField, pointer, message)
}

/// A key the schema does not define: an unknown category (rule 3) or field (rule 1).
fn unknown(path: &str, name: &str) -> Violation {
    let pointer = format!("{path}/{}", escape_token(name));
    let folded = crate::unicode::skeleton(name);
    let hint = if folded != name {
        format!(" (it reads as `{folded}` after Unicode normalisation)")
    } else {
        String::new()
    };
    if is_ledger_level(&pointer) {
        let message = format!("`{name}` is not one of the nine mutation categories{hint}");
        return Violation::new(ViolationCode::MutationLedgerNotExplicit, pointer, message);
    }
    Violation::new(
        ViolationCode::UnknownField,
        pointer,
        format!(
            "`{name}` is not a field of the schema here{hint}; unknown keys are rejected, not ignored"
        ),
    )
}

/// Any other schema error: an invalid value (rule 1), or a malformed ledger (rule 3).
fn invalid_value(path: &str, error: &ValidationError<'_>, schema: &Value) -> Violation {
    let v = invalid(path, error, schema);
    if !is_ledger_level(path) {
        return v;
    }
    Violation::new(
        ViolationCode::MutationLedgerNotExplicit,
        v.pointer,
        format!(
            "{}; the ledger must be an object of nine explicit lists",
            v.message
        ),
    )
}

fn invalid(path: &str, error: &ValidationError<'_>, schema: &Value) -> Violation {
    let what = describe(schema, path)
        .map(|d| format!(" ({d})"))
        .unwrap_or_default();
    Violation::new(
        ViolationCode::InvalidField,
        path,
        format!(
            "`{}` is invalid: {error}{what}",
            if path.is_empty() { "/" } else { path }
        ),
    )
}

/// `node` with its `$ref`s followed (a few levels at most).
fn resolve(schema: &Value, node: &Value) -> Value {
    let mut node = node.clone();
    for _ in 0..8 {
        match node.get("$ref").and_then(Value::as_str) {
            Some(r) => match schema.pointer(r.trim_start_matches('#')) {
                Some(target) => node = target.clone(),
                None => break,
            },
            None => break,
        }
    }
    node
}

/// The schema node of the field at an instance pointer, following `$ref`, `items` and
/// `anyOf` branches (unresolved, so that its own description is kept).
fn field_node(schema: &Value, pointer: &str) -> Option<Value> {
    let mut node = schema.clone();
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        let here = resolve(schema, &node);
        let property = |n: &Value| n.get("properties").and_then(|p| p.get(&token)).cloned();
        node = property(&here)
            .or_else(|| {
                here.get("items")
                    .cloned()
                    .filter(|_| token.parse::<usize>().is_ok())
            })
            .or_else(|| {
                here.get("anyOf")
                    .and_then(Value::as_array)
                    .and_then(|branches| {
                        branches.iter().find_map(|b| property(&resolve(schema, b)))
                    })
            })?;
    }
    Some(node)
}

/// The schema description of the field at an instance pointer.
fn describe(schema: &Value, pointer: &str) -> Option<String> {
    let node = field_node(schema, pointer)?;
    let resolved = resolve(schema, &node);
    node.get("description")
        .or_else(|| resolved.get("description"))
        .and_then(Value::as_str)
        .map(|d| d.split("\n\n").next().unwrap_or(d).replace('\n', " "))
}

/// The string values the schema allows for the field at an instance pointer (its
/// `const`s and `enum`s, through `anyOf`/`oneOf` branches); empty when it is not an
/// enumeration.
pub(crate) fn allowed_values(schema: &Value, pointer: &str) -> Vec<String> {
    fn collect(schema: &Value, node: &Value, out: &mut Vec<String>, depth: u8) {
        let node = resolve(schema, node);
        if let Some(c) = node.get("const").and_then(Value::as_str) {
            out.push(c.to_owned());
        }
        let listed = node
            .get("enum")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        out.extend(listed.filter_map(Value::as_str).map(str::to_owned));
        let branches = ["anyOf", "oneOf"]
            .into_iter()
            .filter_map(|k| node.get(k).and_then(Value::as_array))
            .flatten();
        for branch in branches.filter(|_| depth < 4) {
            collect(schema, branch, out, depth + 1);
        }
    }
    let mut out = Vec::new();
    if let Some(node) = field_node(schema, pointer) {
        collect(schema, &node, &mut out, 0);
    }
    out
}

/// A value outside an enumeration: one violation naming the allowed values.
fn not_allowed(path: &str, value: &Value, allowed: &[String], schema: &Value) -> Violation {
    let what = describe(schema, path)
        .map(|d| format!(" ({d})"))
        .unwrap_or_default();
    let list: Vec<String> = allowed.iter().map(|a| format!("`{a}`")).collect();
    Violation::new(
        ViolationCode::InvalidField,
        path,
        format!(
            "`{path}` is invalid: {value} is not one of {}{what}",
            list.join(", ")
        ),
    )
}

/// Rule 1. "Every required canonical field present."
///
/// Schema errors outside the mutation ledger, plus the fields a status makes
/// required: a `passed`/`failed` validation needs `worktreeHead`, `counts` and at least
/// one command; a `passed`/`findings` diff review needs a non-empty `filesReviewed`.
pub(super) fn required_fields(ctx: &Ctx) -> Vec<Violation> {
    let mut out: Vec<Violation> = ctx.schema.iter().filter(|v| v.rule == 1).cloned().collect();
    out.extend(confusable_keys(ctx));
    let status: Option<ValidationStatus> = ctx.get("/validation/status");
    if matches!(
        status,
        Some(ValidationStatus::Passed | ValidationStatus::Failed)
    ) {
        let s = ctx.text("/validation/status").unwrap_or_default();
        if ctx.text("/validation/worktreeHead").is_none() {
            out.push(Violation::new(
                ViolationCode::MissingField,
                "/validation/worktreeHead",
                format!("validation is `{s}` but does not name the worktree HEAD it ran on"),
            ));
        }
        if ctx
            .report
            .pointer("/validation/counts")
            .is_none_or(Value::is_null)
        {
            out.push(Violation::new(
                ViolationCode::MissingField,
                "/validation/counts",
                format!("validation is `{s}` but has no passed/failed/skipped/ignored counts"),
            ));
        }
        if ctx
            .report
            .pointer("/validation/commands")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            out.push(Violation::new(
                ViolationCode::MissingField,
                "/validation/commands",
                format!("validation is `{s}` but lists no validation command"),
            ));
        }
    }
    let diff: Option<DiffReviewStatus> = ctx.get("/diffReview/status");
    let files_empty = ctx
        .report
        .pointer("/diffReview/filesReviewed")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty);
    if matches!(
        diff,
        Some(DiffReviewStatus::Passed | DiffReviewStatus::Findings)
    ) && files_empty
    {
        out.push(Violation::new(
            ViolationCode::MissingField,
            "/diffReview/filesReviewed",
            "the diff review completed but lists no reviewed files",
        ));
    }
    out
}

/// Normalised legacy names (JSON keys compared lower-case, alphanumerics only).
const LEGACY_KEYS: &[(&str, &str)] = &[
    ("workspacemutations", "Workspace mutations"),
    ("scratchworktreeused", "Scratch worktree used"),
    ("pinnedreviewedhead", "Pinned reviewed head"),
];

const VAGUE_NONE: &[&str] = &[
    "none", "no", "n/a", "na", "nothing", "-", "0", "nil", "empty",
];

/// Rule 2. "Legacy fields rejected, in JSON keys or Markdown labels: `Workspace
/// mutations`, `Scratch worktree used`, `Pinned reviewed head`, and vague
/// `Mutations: none`."
pub(super) fn legacy_fields(ctx: &Ctx) -> Vec<Violation> {
    let mut out = Vec::new();
    walk_keys(ctx.report, "", &mut |pointer, key, value| {
        let norm: String = crate::unicode::skeleton(key)
            .chars()
            .filter(|c| c.is_alphanumeric())
            .collect::<String>()
            .to_lowercase();
        if let Some((_, label)) = LEGACY_KEYS.iter().find(|(k, _)| *k == norm) {
            out.push(Violation::new(
                ViolationCode::LegacyField,
                pointer,
                format!("legacy field `{key}` ({label}) is not part of the schema; record the facts in `mutations`, `validation` and `reviewedHeadSha`"),
            ));
        }
        if norm == "mutations" && value.is_string() {
            out.push(Violation::new(
                ViolationCode::LegacyField,
                pointer,
                format!(
                    "vague `mutations: {}`; list every mutation category explicitly",
                    value.as_str().unwrap_or_default()
                ),
            ));
        }
    });
    for label in ctx.narrative.labels() {
        let legacy = LEGACY_KEYS
            .iter()
            .find(|(_, l)| words(l).join(" ") == label.name)
            .map(|(_, l)| *l);
        let vague = label.name == "mutations"
            && VAGUE_NONE.contains(
                &label
                    .value
                    .trim()
                    .trim_end_matches('.')
                    .to_lowercase()
                    .as_str(),
            );
        if let Some(l) = legacy {
            out.push(Violation::new(
                ViolationCode::LegacyField,
                "/narrative",
                format!("legacy label `{l}` on narrative line {}; use the canonical mutation ledger and validation fields", label.line + 1),
            ));
        } else if vague {
            out.push(Violation::new(
                ViolationCode::LegacyField,
                "/narrative",
                format!("vague `Mutations: {}` on narrative line {}; state each of the nine mutation categories", label.value, label.line + 1),
            ));
        }
    }
    out
}

fn is_legacy_key(key: &str) -> bool {
    let norm: String = crate::unicode::skeleton(key)
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_lowercase();
    LEGACY_KEYS.iter().any(|(k, _)| *k == norm)
}

/// Rule 1 (shape). "Keys and labels are compared after Unicode normalisation (NFKC);
/// confusable characters (look-alike letters, NBSP, zero-width characters) are
/// violations of their own."
///
/// Every object key of the report, and every label of the narrative, must be free of
/// invisible characters, non-ASCII spaces, Cyrillic/Greek look-alikes and
/// compatibility forms that NFKC changes.
pub(super) fn confusable_keys(ctx: &Ctx) -> Vec<Violation> {
    let mut out = Vec::new();
    walk_keys(ctx.report, "", &mut |pointer, key, _| {
        let found = crate::unicode::suspicious(key);
        if !found.is_empty() {
            out.push(Violation::new(
                ViolationCode::ConfusableCharacter,
                pointer,
                format!(
                    "key `{}` contains {}; keys must be the schema's plain ASCII names",
                    key.escape_default(),
                    found.join(", ")
                ),
            ));
        }
    });
    for label in ctx.narrative.labels() {
        let found = crate::unicode::suspicious(&label.original);
        if !found.is_empty() {
            out.push(Violation::new(
                ViolationCode::ConfusableCharacter,
                "/narrative",
                format!(
                    "label `{}` on narrative line {} contains {}; write labels in plain characters",
                    label.original.escape_default(),
                    label.line + 1,
                    found.join(", ")
                ),
            ));
        }
    }
    out
}

fn walk_keys(value: &Value, pointer: &str, visit: &mut dyn FnMut(&str, &str, &Value)) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let p = format!("{pointer}/{}", escape_token(key));
                visit(&p, key, child);
                walk_keys(child, &p, visit);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                walk_keys(child, &format!("{pointer}/{i}"), visit);
            }
        }
        _ => {}
    }
}

/// Rule 3. "All nine mutation categories present and explicit."
///
/// Each of `fileEditsByReviewer`, `worktreeIndexMutations`, `gitRefMutations`,
/// `mcpForgeMutations`, `reviewMutations`, `mergeMutations`, `cleanupMutations`,
/// `externalStateMutations` and `readOnlyDiagnostics` must be a list (`[]` when empty),
/// and no other category may appear.
pub(super) fn mutation_categories_explicit(ctx: &Ctx) -> Vec<Violation> {
    ctx.schema.iter().filter(|v| v.rule == 3).cloned().collect()
}
