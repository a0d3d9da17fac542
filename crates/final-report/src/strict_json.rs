//! JSON text read strictly: an object that repeats a key is ambiguous (a parser keeps
//! the last one silently, so `"status":"failed","status":"passed"` reads as passed),
//! and a report or transcript line that repeats one is refused rather than read. The
//! check is vouch-json's, the one every vouch crate that reads JSON uses.

/// Where a JSON text repeats a key within one object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DuplicateKey(String);

/// `Err` when an object anywhere in `text` repeats a key. Text that is not JSON has
/// none (the caller's parse reports that).
pub(crate) fn check_unique_keys(text: &str) -> Result<(), DuplicateKey> {
    match vouch_json::duplicate_key(text) {
        Some(problem) => Err(DuplicateKey(problem)),
        None => Ok(()),
    }
}
