//! JSON text read strictly: a key repeated within one object is ambiguous (a parser
//! keeps the last silently, so `"status":"failed","status":"passed"` reads as passed),
//! so model replies, saved review reports and agents' final reports and transcripts that
//! repeat one are refused rather than read. One check for every crate that reads JSON
//! it must not misread; it depends on no other vouch crate.

/// The problem of a JSON text that repeats a key within one object (with where), if it
/// does. Text that is not JSON has none.
pub fn duplicate_key(source: &str) -> Option<String> {
    match serde_json::from_str::<UniqueKeys>(source) {
        Err(e) if e.is_data() => Some(e.to_string()),
        _ => None,
    }
}

/// Any JSON value, refused when an object in it repeats a key.
struct UniqueKeys;

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueKeys)
    }
}

impl<'de> serde::de::Visitor<'de> for UniqueKeys {
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

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<UniqueKeys>()?.is_some() {}
        Ok(UniqueKeys)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
        let mut keys = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if keys.contains(&key) {
                return Err(serde::de::Error::custom(format!(
                    "the key `{key}` appears twice in one object"
                )));
            }
            map.next_value::<UniqueKeys>()?;
            keys.insert(key);
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
            assert_eq!(duplicate_key(text).is_some(), *repeated, "{text}");
        }
        let problem = duplicate_key(r#"{"status":"failed","status":"passed"}"#).unwrap();
        assert!(problem.contains("`status` appears twice"), "{problem}");
    }
}
