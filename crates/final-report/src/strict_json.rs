//! JSON text read strictly: an object that repeats a key is ambiguous (a parser keeps
//! the last one silently, so `"status":"failed","status":"passed"` reads as passed),
//! and a report or transcript line that repeats one is refused rather than read.
//!
//! vouch-core has the same check (`vouch_core::json::duplicate_key`); this crate is
//! independent of every other vouch crate (ARCHITECTURE.md), so it keeps its own.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// Where a JSON text repeats a key within one object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DuplicateKey(String);

/// `Err` when an object anywhere in `text` repeats a key. Text that is not JSON has
/// none (the caller's parse reports that).
pub(crate) fn check_unique_keys(text: &str) -> Result<(), DuplicateKey> {
    match serde_json::from_str::<UniqueKeys>(text) {
        Err(e) if e.is_data() => Err(DuplicateKey(e.to_string())),
        _ => Ok(()),
    }
}

/// Any JSON value, refused when an object in it repeats a key.
struct UniqueKeys;

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueKeys)
    }
}

impl<'de> Visitor<'de> for UniqueKeys {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
        Ok(UniqueKeys)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
        Ok(UniqueKeys)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
        Ok(UniqueKeys)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
        Ok(UniqueKeys)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self, E> {
        Ok(UniqueKeys)
    }

    fn visit_unit<E>(self) -> Result<Self, E> {
        Ok(UniqueKeys)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<UniqueKeys>()?.is_some() {}
        Ok(UniqueKeys)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
        let mut keys = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key.clone()) {
                return Err(de::Error::custom(format!(
                    "the key `{key}` appears twice in one object"
                )));
            }
            map.next_value::<UniqueKeys>()?;
        }
        Ok(UniqueKeys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_key_at_any_depth_is_found_and_distinct_keys_are_not() {
        let table: &[(&str, bool)] = &[
            (r#"{"a":1,"b":2}"#, false),
            (r#"{"a":{"b":1},"c":{"b":2}}"#, false),
            (r#"{"status":"failed","status":"passed"}"#, true),
            (r#"{"v":{"x":[{"k":1,"k":1}]}}"#, true),
            (r#"[{"a":1},{"a":2}]"#, false),
            ("not json", false),
        ];
        for (text, repeated) in table {
            assert_eq!(check_unique_keys(text).is_err(), *repeated, "{text}");
        }
        let err = check_unique_keys(r#"{"status":"failed","status":"passed"}"#).unwrap_err();
        assert!(err.to_string().contains("`status` appears twice"), "{err}");
    }
}
