//! [`SpecialistHandle`]: the one code path through a [`PluginTable`], for built-in and
//! dynamic plugins alike.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use vouch_abi::ContractRequest;

use super::Origin;
use vouch_abi::table::{method, status};
use vouch_abi::{
    ABI_MAJOR, CallError, CallResult, Descriptor, PAYLOAD_VERSION, ParsedReply, PluginTable,
    PromptRequest, RenderedPrompt, TABLE_SIZE, TableHeader,
};

use super::PluginError;

/// The lowest ABI minor this host requires (it reads no field added after 1.0).
pub const REQUIRED_ABI_MINOR: u32 = 0;

/// The lowest payload version this host understands; the highest is
/// [`vouch_abi::PAYLOAD_VERSION`].
pub const MIN_PAYLOAD_VERSION: u32 = 1;

/// A checked specialist: its table, descriptor and origin. Cheap to clone (an `Arc`),
/// `Send + Sync`; every method is safe and may be called from any thread.
#[derive(Clone)]
pub struct SpecialistHandle {
    inner: Arc<Inner>,
}

struct Inner {
    table: &'static PluginTable,
    descriptor: Descriptor,
    origin: Origin,
}

impl fmt::Debug for SpecialistHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpecialistHandle")
            .field("descriptor", &self.inner.descriptor)
            .field("origin", &self.inner.origin)
            .finish()
    }
}

impl SpecialistHandle {
    /// Checks a table and describes it: ABI major equal to [`vouch_abi::ABI_MAJOR`], minor
    /// at least [`REQUIRED_ABI_MINOR`], `table_size` at least the host's
    /// `size_of::<PluginTable>()`, a descriptor from `describe`, and a payload version in
    /// [`MIN_PAYLOAD_VERSION`]`..=`[`vouch_abi::PAYLOAD_VERSION`]. Pins (id, version) are
    /// checked by the caller.
    ///
    /// # Safety
    /// `table` must be null or point to a table that stays valid and unchanged for the
    /// rest of the process, whose first [`TableHeader`] fields are readable, and — when
    /// its `table_size` covers a full [`PluginTable`] — whose function pointers follow
    /// the [`PluginTable`] contract.
    pub(super) unsafe fn from_table(
        table: *const PluginTable,
        origin: Origin,
    ) -> Result<Self, PluginError> {
        if table.is_null() {
            return Err(PluginError::NullTable {
                origin: Box::new(origin),
            });
        }
        // Only the header is known to exist until the size is checked.
        // SAFETY: non-null and at least a header by the caller's contract.
        let header = unsafe { table.cast::<TableHeader>().read_unaligned() };
        check_header(&header, &origin)?;
        // SAFETY: the header says the table holds every field this host reads, and it
        // lives for the rest of the process by the caller's contract.
        let table: &'static PluginTable = unsafe { &*table };
        let label = origin.to_string();
        let descriptor: Descriptor =
            decode_output(take(table, (table.describe)()), &label, "describe").map_err(|e| {
                PluginError::Describe {
                    origin: Box::new(origin.clone()),
                    message: e.to_string(),
                }
            })?;
        if !(MIN_PAYLOAD_VERSION..=PAYLOAD_VERSION).contains(&descriptor.payload_version) {
            return Err(PluginError::PayloadVersion {
                origin: Box::new(origin),
                min: MIN_PAYLOAD_VERSION,
                max: PAYLOAD_VERSION,
                found: descriptor.payload_version,
            });
        }
        Ok(SpecialistHandle {
            inner: Arc::new(Inner {
                table,
                descriptor,
                origin,
            }),
        })
    }

    /// What the plugin's `describe` returned when it was registered.
    pub fn descriptor(&self) -> &Descriptor {
        &self.inner.descriptor
    }

    /// Where the table came from.
    pub fn origin(&self) -> &Origin {
        &self.inner.origin
    }

    /// `id version (origin)`, as used in error messages.
    pub fn label(&self) -> String {
        let d = &self.inner.descriptor;
        format!("`{}` {} ({})", d.id, d.version, self.inner.origin)
    }

    /// Renders the role prompt of one stage instance.
    ///
    /// # Errors
    /// [`PluginError::Method`] with the specialist's message, [`PluginError::Panicked`],
    /// or [`PluginError::Protocol`].
    pub fn render_prompt(&self, request: &PromptRequest) -> Result<RenderedPrompt, PluginError> {
        self.call(method::RENDER_PROMPT, request)
    }

    /// The output contract (a bounded JSON Schema) of one stage instance.
    ///
    /// # Errors
    /// [`PluginError::Panicked`] or [`PluginError::Protocol`] (also when the contract is
    /// not a JSON object).
    pub fn contract(&self, request: &ContractRequest) -> Result<Value, PluginError> {
        let schema: Value = self.call(method::CONTRACT, request)?;
        if !schema.is_object() {
            return Err(PluginError::Protocol {
                specialist: self.label(),
                method: method::CONTRACT.into(),
                message: "the contract is not a JSON object".into(),
            });
        }
        Ok(schema)
    }

    /// Parses and normalises a reply object extracted from the model's text.
    ///
    /// # Errors
    /// [`PluginError::Method`] naming what does not fit the contract (show its message
    /// to the repair call), [`PluginError::Panicked`], or [`PluginError::Protocol`].
    pub fn parse(&self, reply: &Value) -> Result<ParsedReply, PluginError> {
        self.call(method::PARSE, reply)
    }

    fn call<I: Serialize, O: DeserializeOwned>(
        &self,
        method_name: &str,
        input: &I,
    ) -> Result<O, PluginError> {
        let label = self.label();
        let input = serde_json::to_vec(input).map_err(|e| PluginError::Protocol {
            specialist: label.clone(),
            method: method_name.into(),
            message: format!("cannot encode the input: {e}"),
        })?;
        let table = self.inner.table;
        // SAFETY: both slices are valid for the duration of the call, which is all the
        // table contract asks; the table was checked in `from_table`.
        let result = unsafe {
            (table.call)(
                method_name.as_ptr(),
                method_name.len(),
                input.as_ptr(),
                input.len(),
            )
        };
        decode_output(take(table, result), &label, method_name)
    }
}

/// The three header checks, in the design's order: major, minor, size.
fn check_header(header: &TableHeader, origin: &Origin) -> Result<(), PluginError> {
    if header.abi_major != ABI_MAJOR {
        return Err(PluginError::AbiMajor {
            origin: Box::new(origin.clone()),
            expected: ABI_MAJOR,
            found: header.abi_major,
        });
    }
    // Vacuous while the host requires minor 0; it starts to bite once the host reads a
    // field added in a later minor.
    #[allow(clippy::absurd_extreme_comparisons)]
    if header.abi_minor < REQUIRED_ABI_MINOR {
        return Err(PluginError::AbiMinor {
            origin: Box::new(origin.clone()),
            required: REQUIRED_ABI_MINOR,
            found: header.abi_minor,
        });
    }
    if header.table_size < TABLE_SIZE {
        return Err(PluginError::ShortTable {
            origin: Box::new(origin.clone()),
            expected: TABLE_SIZE,
            found: header.table_size,
        });
    }
    Ok(())
}

/// Copies a result's bytes out and gives the buffer back to the plugin that made it.
fn take(table: &PluginTable, result: CallResult) -> (u32, Vec<u8>) {
    // SAFETY: the buffer was just returned by this table and is freed exactly once, by
    // the same table's `free`.
    let bytes = unsafe { result.output.to_vec() };
    unsafe { (table.free)(result.output) };
    (result.status, bytes)
}

fn decode_output<O: DeserializeOwned>(
    (code, bytes): (u32, Vec<u8>),
    label: &str,
    method_name: &str,
) -> Result<O, PluginError> {
    let specialist = label.to_string();
    let method = method_name.to_string();
    let message = || {
        serde_json::from_slice::<CallError>(&bytes)
            .map(|e| e.message)
            .unwrap_or_else(|_| String::from_utf8_lossy(&bytes).into_owned())
    };
    match code {
        status::OK => serde_json::from_slice(&bytes).map_err(|e| PluginError::Protocol {
            specialist,
            method,
            message: format!("output is not the method's JSON: {e}"),
        }),
        status::ERROR => Err(PluginError::Method {
            specialist,
            method,
            message: message(),
        }),
        status::PANICKED => Err(PluginError::Panicked {
            specialist,
            method,
            message: message(),
        }),
        status::BAD_REQUEST => Err(PluginError::Protocol {
            specialist,
            method,
            message: format!("the plugin refused the request: {}", message()),
        }),
        other => Err(PluginError::Protocol {
            specialist,
            method,
            message: format!("unknown status {other}: {}", message()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_checks_name_expected_and_found() {
        let ok = TableHeader {
            abi_major: ABI_MAJOR,
            abi_minor: REQUIRED_ABI_MINOR,
            table_size: TABLE_SIZE,
        };
        let origin = Origin::Dynamic {
            path: "/x/libp.so".into(),
            sha256: "00".into(),
        };
        assert!(check_header(&ok, &origin).is_ok());
        let bigger = TableHeader {
            abi_minor: REQUIRED_ABI_MINOR + 3,
            table_size: TABLE_SIZE + 64,
            ..ok
        };
        assert!(check_header(&bigger, &origin).is_ok());
        let cases = [
            (
                TableHeader {
                    abi_major: ABI_MAJOR + 1,
                    ..ok
                },
                format!(
                    "ABI major version is {}, this host requires {ABI_MAJOR}",
                    ABI_MAJOR + 1
                ),
            ),
            (
                TableHeader {
                    table_size: TABLE_SIZE - 8,
                    ..ok
                },
                format!(
                    "{} bytes, this host needs at least {TABLE_SIZE}",
                    TABLE_SIZE - 8
                ),
            ),
        ];
        for (header, needle) in cases {
            let err = check_header(&header, &origin).unwrap_err().to_string();
            assert!(err.contains(&needle), "{err}");
            assert!(err.contains("/x/libp.so"), "{err}");
        }
    }

    #[test]
    fn errors_stay_small_enough_to_return_by_value() {
        // Large origins are boxed so `Result<_, PluginError>` stays cheap to move and
        // callers can wrap it (clippy's `result_large_err` limit is 128 bytes).
        let size = std::mem::size_of::<PluginError>();
        assert!(size <= 96, "PluginError is {size} bytes");
    }

    #[test]
    fn handles_are_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<SpecialistHandle>();
    }
}
