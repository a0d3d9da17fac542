//! Request sizes on the wire: what the agent loop counts to keep every request it
//! assembles within [`crate::Budget::max_request_bytes`].

use crate::chat::{ChatRequest, RequestBody};
use crate::message::ChatMessage;

/// Room kept for what a request's body carries besides its messages and the parts
/// [`fixed_len`] measures: the model's name.
const MODEL_NAME_ROOM: usize = 256;

/// Least room, in bytes, worth offering a tool: below it the tool phase ends
/// ([`crate::BudgetKind::RequestSize`]).
pub const MIN_TOOL_ROOM: usize = 1024;

/// Bytes `text` takes as a JSON string on the wire, quotes and escapes included.
pub fn json_text_len(text: &str) -> usize {
    let escaped: usize = text
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
            0x00..=0x1f => 5,
            _ => 0,
        })
        .sum();
    text.len() + escaped + 2
}

/// `text` cut to its longest prefix (at a character) that takes at most `max_bytes` as a
/// JSON string without its quotes, or `None` when the whole of it does.
pub fn cut_to_json_len(text: &str, max_bytes: usize) -> Option<&str> {
    let mut used = 0usize;
    for (at, c) in text.char_indices() {
        let mut buf = [0u8; 4];
        used += json_text_len(c.encode_utf8(&mut buf)) - 2;
        if used > max_bytes {
            return Some(&text[..at]);
        }
    }
    None
}

/// Bytes `message` takes in a request's `messages` array (its separator included).
pub(crate) fn message_len(message: &ChatMessage) -> usize {
    json_value_len(message) + 1
}

/// Bytes of a request's body besides its messages: the envelope, tool definitions and
/// response format of `request` (whose messages are ignored), with room for the
/// model's name.
pub(crate) fn fixed_len(request: &ChatRequest) -> usize {
    let mut body = RequestBody::of("", request, true);
    body.messages = &[];
    json_value_len(&body) + MODEL_NAME_ROOM
}

/// Bytes of `value` serialized as compact JSON, counted as they are written (nothing is
/// kept); 0 when it cannot be serialized.
pub fn json_value_len(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).map_or(0, |()| count.0)
}

/// The text a tool's answer is replaced with when it would take the next request past
/// its size bound: `bytes` is the answer's size as a JSON string, `room` what the
/// request has left for it.
pub fn oversized_answer(bytes: usize, room: usize) -> String {
    format!(
        "not shown: this answer takes {bytes} bytes and the request has room for {room} more \
         under its size bound (max_request_tokens); ask for less (a narrower line range, a \
         more specific pattern or path glob) or answer with what you have read"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A cut falls at a character, before one whose escaped bytes pass the bound.
    #[test]
    fn a_cut_to_a_json_length_falls_at_a_character() {
        // Cut inside the two-byte é: the cut falls before it.
        assert_eq!(cut_to_json_len("aé", 2), Some("a"));
        assert_eq!(cut_to_json_len("a\"b", 2), Some("a"));
        assert_eq!(cut_to_json_len("a\"b", 4), None);
    }

    #[test]
    fn json_text_len_counts_quotes_and_escapes() {
        for (text, want) in [
            ("", 2),
            ("abc", 5),
            ("a\"b", 6),
            ("a\\b\n", 8),
            ("\u{1}", 8),
            ("é", 4),
        ] {
            assert_eq!(json_text_len(text), want, "{text:?}");
        }
    }

    proptest! {
        /// The count is serde_json's, for any text.
        #[test]
        fn json_text_len_is_the_serialized_length(text in any::<String>()) {
            prop_assert_eq!(json_text_len(&text), serde_json::to_string(&text).unwrap().len());
        }

        /// The counted length is that of the serialized bytes, for any nesting of text.
        #[test]
        fn json_value_len_is_the_serialized_length(
            texts in proptest::collection::vec(any::<String>(), 0..6),
            n in any::<i64>(),
        ) {
            let value = serde_json::json!({"texts": texts, "n": n, "nested": {"first": texts.first()}});
            prop_assert_eq!(json_value_len(&value), serde_json::to_vec(&value).unwrap().len());
            let message = ChatMessage::user(texts.concat());
            prop_assert_eq!(message_len(&message), serde_json::to_vec(&message).unwrap().len() + 1);
        }
    }
}
