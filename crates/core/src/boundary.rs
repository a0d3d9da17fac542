//! The plugin boundary's vocabulary as vouch-core uses it: [`Area`] and [`Role`] are
//! defined once, in `vouch_abi::payload` (their `as_str`, `FromStr` and serde spelling),
//! and re-exported here. vouch-abi has no schemars (plugins vendor it), so the report's
//! JSON Schema gets each one through a schema type built from its `ALL` and `as_str`:
//! the schema's enum is the same spelling, never a copy of it.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

pub use vouch_abi::{Area, Role};

/// The JSON Schema of [`Area`] (`#[schemars(with = "AreaSchema")]` on an `Area` field).
pub struct AreaSchema;

impl JsonSchema for AreaSchema {
    fn schema_name() -> Cow<'static, str> {
        "Area".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Review area of a candidate or finding (the contracts' `area`).",
            "type": "string",
            "enum": Area::ALL.map(Area::as_str),
        })
    }
}

/// The JSON Schema of [`Role`] (`#[schemars(with = "RoleSchema")]` on a `Role` field).
pub struct RoleSchema;

impl JsonSchema for RoleSchema {
    fn schema_name() -> Cow<'static, str> {
        "Role".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "What a specialist does in a review (its descriptor's role).",
            "type": "string",
            "enum": Role::ALL.map(Role::as_str),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    /// The schema types list exactly the spellings of every variant, in `ALL` order.
    #[test]
    fn schemas_enumerate_every_spelling() {
        let area = serde_json::to_value(schemars::schema_for!(AreaSchema)).unwrap();
        let areas: Vec<String> = Area::ALL.iter().map(|a| a.as_str().into()).collect();
        assert_eq!(area["enum"], serde_json::json!(areas));
        let role = serde_json::to_value(schemars::schema_for!(RoleSchema)).unwrap();
        let roles: Vec<String> = Role::ALL.iter().map(|r| r.as_str().into()).collect();
        assert_eq!(role["enum"], serde_json::json!(roles));
    }

    proptest::proptest! {
        /// For any text (hostile: case changes, spaces, underscores, unicode), `FromStr`
        /// and serde agree: both accept exactly the `as_str` spellings of `ALL`, and an
        /// accepted value spells back to the same text.
        #[test]
        fn from_str_and_serde_accept_exactly_the_spellings(
            text in proptest::prop_oneof![
                proptest::sample::select(
                    Area::ALL.map(Area::as_str).into_iter().chain(Role::ALL.map(Role::as_str)).collect::<Vec<_>>()
                ).prop_map(String::from),
                proptest::sample::select(Area::ALL.map(Area::as_str).to_vec())
                    .prop_map(|s| s.to_uppercase()),
                proptest::sample::select(Role::ALL.map(Role::as_str).to_vec())
                    .prop_map(|s| format!(" {}", s.replace('-', "_"))),
                ".{0,24}",
            ]
        ) {
            let json = serde_json::Value::from(text.as_str());
            let area = text.parse::<Area>();
            proptest::prop_assert_eq!(area.is_ok(), Area::ALL.iter().any(|a| a.as_str() == text));
            proptest::prop_assert_eq!(area.clone().ok(), serde_json::from_value::<Area>(json.clone()).ok());
            if let Ok(a) = area {
                proptest::prop_assert_eq!(a.as_str(), text.as_str());
            }
            let role = text.parse::<Role>();
            proptest::prop_assert_eq!(role.is_ok(), Role::ALL.iter().any(|r| r.as_str() == text));
            proptest::prop_assert_eq!(role.clone().ok(), serde_json::from_value::<Role>(json).ok());
            if let Ok(r) = role {
                proptest::prop_assert_eq!(r.as_str(), text.as_str());
            }
        }
    }
}
