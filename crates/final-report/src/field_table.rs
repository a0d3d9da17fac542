//! The field reference of docs/final-report.md, generated from the JSON Schema: every
//! field's path, type, whether it is required and the values it allows. A test keeps
//! the committed docs equal to [`field_reference`], so docs and schema cannot drift.

use serde_json::Value;

/// One documented field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRow {
    /// Dotted path; `[]` marks the items of a list (`commands[].location`).
    pub path: String,
    /// The type in words, allowed values included.
    pub kind: String,
    /// Whether the field must be present.
    pub required: bool,
}

/// Every field of the schema, depth first in schema order.
pub fn field_rows(schema: &Value) -> Vec<FieldRow> {
    let mut rows = Vec::new();
    walk_object(schema, schema, "", &mut rows);
    rows
}

/// The Markdown table of [`field_rows`] for [`crate::json_schema`].
pub fn field_reference() -> String {
    let mut out = String::from("| Field | Type and allowed values | Required |\n|---|---|---|\n");
    for row in field_rows(&crate::json_schema()) {
        let required = if row.required { "yes" } else { "no" };
        out.push_str(&format!("| `{}` | {} | {required} |\n", row.path, row.kind));
    }
    out
}

fn resolve<'a>(schema: &'a Value, node: &'a Value) -> &'a Value {
    let mut node = node;
    for _ in 0..8 {
        let Some(target) = node
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| schema.pointer(r.trim_start_matches('#')))
        else {
            break;
        };
        node = target;
    }
    node
}

/// The branches of an `anyOf`/`oneOf`, resolved, without the `null` one.
fn branches<'a>(schema: &'a Value, node: &'a Value) -> Vec<&'a Value> {
    ["anyOf", "oneOf"]
        .into_iter()
        .filter_map(|k| node.get(k).and_then(Value::as_array))
        .flatten()
        .map(|b| resolve(schema, b))
        .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
        .collect()
}

fn is_not_applicable(node: &Value) -> bool {
    node.pointer("/properties/notApplicable").is_some()
}

/// The string constants of an enumeration node (empty when it is not one).
fn constants(schema: &Value, node: &Value) -> Vec<String> {
    let node = resolve(schema, node);
    let mut out: Vec<String> = node
        .get("const")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .into_iter()
        .collect();
    let listed = node
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    out.extend(listed.filter_map(Value::as_str).map(str::to_owned));
    let alternatives = branches(schema, node);
    if !alternatives.is_empty()
        && alternatives
            .iter()
            .all(|b| b.get("const").is_some() || b.get("enum").is_some())
    {
        out.extend(alternatives.iter().flat_map(|b| constants(schema, b)));
    }
    out
}

/// The type of `node` in words, recursing into objects and list items.
fn kind(schema: &Value, node: &Value, path: &str, rows: &mut Vec<FieldRow>) -> String {
    let node = resolve(schema, node);
    let values = constants(schema, node);
    if !values.is_empty() {
        let quoted: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
        return if quoted.len() == 1 {
            format!("string {}", quoted[0])
        } else {
            format!("one of {}", quoted.join(", "))
        };
    }
    let alternatives = branches(schema, node);
    if !alternatives.is_empty() {
        let words: Vec<String> = alternatives
            .iter()
            .map(|b| match is_not_applicable(b) {
                true => "`{notApplicable}`".to_owned(),
                false => kind(schema, b, path, rows),
            })
            .collect();
        return words.join(" or ");
    }
    let types: Vec<&str> = match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    match types.iter().find(|t| **t != "null").copied() {
        Some("object") => {
            walk_object(schema, node, path, rows);
            "object".to_owned()
        }
        Some("array") => {
            let items = node.get("items").unwrap_or(&Value::Null);
            format!(
                "list of {}",
                kind(schema, items, &format!("{path}[]"), rows)
            )
        }
        Some("string") if node.get("minLength").is_some() => "non-empty string".to_owned(),
        Some(other) => other.to_owned(),
        None => "any".to_owned(),
    }
}

fn walk_object(schema: &Value, node: &Value, path: &str, rows: &mut Vec<FieldRow>) {
    let node = resolve(schema, node);
    let Some(properties) = node.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = node
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for (name, child) in properties {
        let here = if path.is_empty() {
            name.clone()
        } else {
            format!("{path}.{name}")
        };
        let at = rows.len();
        let text = kind(schema, child, &here, rows);
        rows.insert(
            at,
            FieldRow {
                path: here,
                kind: text,
                required: required.contains(&name.as_str()),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn rows_name_types_values_and_requirement() {
        let schema = json!({
            "type": "object",
            "required": ["a"],
            "properties": {
                "a": {"$ref": "#/$defs/E"},
                "b": {"type": "array", "items": {"type": "object", "properties": {"c": {"type": ["string", "null"]}}}},
                "d": {"anyOf": [{"type": "boolean"}, {"type": "string", "minLength": 1}]}
            },
            "$defs": {"E": {"oneOf": [{"const": "x"}, {"const": "y"}]}}
        });
        let rows = field_rows(&schema);
        let as_text: Vec<(String, String, bool)> = rows
            .into_iter()
            .map(|r| (r.path, r.kind, r.required))
            .collect();
        assert_eq!(
            as_text,
            [
                ("a".into(), "one of `x`, `y`".into(), true),
                ("b".into(), "list of object".into(), false),
                ("b[].c".into(), "string".into(), false),
                ("d".into(), "boolean or non-empty string".into(), false),
            ]
        );
    }
}
