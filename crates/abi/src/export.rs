//! The plugin side of the table: generic `extern "C"` functions that serve a
//! [`Specialist`] over [`PluginTable`], and the [`export_specialist!`](crate::export_specialist)
//! macro that plugin crates use.
//!
//! Plugin authors normally only write `export_specialist!(my_id, MySpecialist);`. The
//! items here are public so the macro can reach them and so test plugins can build
//! deliberately malformed tables (e.g. a wrong ABI major) from a correct one.

use std::panic::{AssertUnwindSafe, catch_unwind};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::specialist::Specialist;
use crate::table::{ABI_MAJOR, ABI_MINOR, Buffer, CallError, CallResult, PluginTable, TABLE_SIZE};
use crate::table::{method, status};

/// A specialist type with one process-wide instance, as [`export_specialist!`](crate::export_specialist)
/// implements it (a `OnceLock` holding `Default::default()`).
pub trait Exported: Specialist + Sized {
    /// The instance every table call uses.
    fn instance() -> &'static Self;
}

/// The table serving `S`, filled in with this crate's ABI version and table size.
pub const fn table_of<S: Exported>() -> PluginTable {
    PluginTable {
        abi_major: ABI_MAJOR,
        abi_minor: ABI_MINOR,
        table_size: TABLE_SIZE,
        describe: describe::<S>,
        call: call::<S>,
        free,
    }
}

/// `describe` of the table: `S::describe()` as JSON. Panics become [`status::PANICKED`].
pub extern "C" fn describe<S: Exported>() -> CallResult {
    guard(|| json(&S::instance().describe()))
}

/// `call` of the table: dispatches [`method`] names to `S`.
///
/// # Safety
/// `method_ptr`/`input_ptr` must point to `method_len`/`input_len` readable bytes (or
/// be null with length 0) for the duration of the call.
pub unsafe extern "C" fn call<S: Exported>(
    method_ptr: *const u8,
    method_len: usize,
    input_ptr: *const u8,
    input_len: usize,
) -> CallResult {
    // SAFETY: guaranteed by the caller; the slices do not outlive this call.
    let method_bytes = unsafe { borrow(method_ptr, method_len) };
    let input = unsafe { borrow(input_ptr, input_len) };
    guard(|| dispatch(S::instance(), method_bytes, input))
}

/// `free` of the table: releases a buffer this library returned.
///
/// # Safety
/// `buffer` must come from this library's `describe` or `call` and not be freed yet.
pub unsafe extern "C" fn free(buffer: Buffer) {
    // Dropping a boxed slice of bytes cannot panic, but an unwind must never cross the
    // boundary, so the guard stays.
    // SAFETY: guaranteed by the caller.
    let _ = catch_unwind(AssertUnwindSafe(|| unsafe { buffer.release() }));
}

/// A method's failure: a [`status`] code and its message.
type Failure = (u32, String);

fn dispatch<S: Specialist>(s: &S, method_bytes: &[u8], input: &[u8]) -> Result<Vec<u8>, Failure> {
    let name = std::str::from_utf8(method_bytes)
        .map_err(|_| (status::BAD_REQUEST, "method name is not UTF-8".to_string()))?;
    match name {
        method::RENDER_PROMPT => {
            let prompt = s
                .render_prompt(&decode(name, input)?)
                .map_err(|m| (status::ERROR, m))?;
            json(&prompt)
        }
        method::CONTRACT => json(&s.contract(&decode(name, input)?)),
        method::PARSE => {
            let parsed = s
                .parse(&decode(name, input)?)
                .map_err(|m| (status::ERROR, m))?;
            json(&parsed)
        }
        other => Err((status::BAD_REQUEST, format!("unknown method `{other}`"))),
    }
}

fn decode<T: DeserializeOwned>(method_name: &str, input: &[u8]) -> Result<T, Failure> {
    serde_json::from_slice(input).map_err(|e| {
        (
            status::BAD_REQUEST,
            format!("input of `{method_name}` is not its JSON payload: {e}"),
        )
    })
}

fn json<T: Serialize>(value: &T) -> Result<Vec<u8>, Failure> {
    serde_json::to_vec(value).map_err(|e| (status::ERROR, format!("cannot encode output: {e}")))
}

/// Runs `f`, turning its failure or panic into a [`CallResult`] that owns a buffer of
/// this library.
fn guard(f: impl FnOnce() -> Result<Vec<u8>, Failure>) -> CallResult {
    let (code, bytes) = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(bytes)) => (status::OK, bytes),
        Ok(Err((code, message))) => (code, error_json(message)),
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            // A payload whose destructor panics must not unwind out of here either.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            (status::PANICKED, error_json(message))
        }
    };
    CallResult {
        status: code,
        output: Buffer::from_vec(bytes),
    }
}

fn error_json(message: String) -> Vec<u8> {
    // Serialising a struct holding one String cannot fail.
    serde_json::to_vec(&CallError { message }).unwrap_or_default()
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

/// # Safety
/// `ptr` must point to `len` readable bytes for `'a`, or be null with `len` 0.
unsafe fn borrow<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if ptr.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: guaranteed by the caller.
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

/// Exports a [`Specialist`] as a vouch plugin.
///
/// `export_specialist!(symbol_id, Type)` where `symbol_id` is the plugin id with `-`
/// replaced by `_` (id `generic-investigator` → `generic_investigator`) and `Type`
/// implements [`Specialist`] and [`Default`]. It generates, in the invoking module:
///
/// - `impl vouch_abi::export::Exported for Type` (one lazily built instance);
/// - `pub fn plugin_table() -> &'static vouch_abi::PluginTable`, the safe entry point a
///   binary uses to hand a linked (rlib) built-in to the host's registry;
/// - `#[no_mangle] extern "C" fn vouch_plugin_<symbol_id>() -> *const PluginTable`, the
///   symbol the host looks up with `dlopen` ([`crate::export_symbol`]). The symbol is
///   unique per plugin id, so several built-ins linked into one binary never clash;
/// - under `cfg(test)`, a test checking that the symbol matches `describe().id`.
///
/// It refuses to compile with `panic = "abort"`: the table catches panics, which only
/// works with unwinding.
///
/// ```
/// use serde_json::{Value, json};
/// use vouch_abi::{
///     ContractRequest, Descriptor, PAYLOAD_VERSION, ParsedReply, PromptRequest, RenderedPrompt,
///     Role,
/// };
///
/// #[derive(Default)]
/// pub struct MySpecialist;
///
/// impl vouch_abi::Specialist for MySpecialist {
///     fn describe(&self) -> Descriptor {
///         Descriptor {
///             id: "my-specialist".into(),
///             version: "0.1.0".into(),
///             role: Role::Reviewer,
///             payload_version: PAYLOAD_VERSION,
///             description: "An example.".into(),
///         }
///     }
///     fn render_prompt(&self, request: &PromptRequest) -> Result<RenderedPrompt, String> {
///         Ok(RenderedPrompt { system: "You review.".into(), user: request.label.clone() })
///     }
///     // A real specialist returns a standard contract from vouch-specialist-kit
///     // (`contract::candidate_contract`) and parses with its parser.
///     fn contract(&self, _request: &ContractRequest) -> Value {
///         json!({"type": "object"})
///     }
///     fn parse(&self, reply: &Value) -> Result<ParsedReply, String> {
///         serde_json::from_value(reply.clone())
///             .map(ParsedReply::Candidates)
///             .map_err(|e| e.to_string())
///     }
/// }
///
/// vouch_abi::export_specialist!(my_specialist, MySpecialist);
///
/// # fn main() {
/// let table = plugin_table();
/// assert_eq!(table.abi_major, vouch_abi::ABI_MAJOR);
/// assert_eq!(table.table_size, vouch_abi::TABLE_SIZE);
/// # }
/// ```
#[macro_export]
macro_rules! export_specialist {
    ($symbol_id:ident, $ty:ty) => {
        #[cfg(panic = "abort")]
        compile_error!(
            "vouch plugins must be built with panic = \"unwind\": the plugin table catches panics"
        );

        impl $crate::export::Exported for $ty {
            fn instance() -> &'static Self {
                static INSTANCE: ::std::sync::OnceLock<$ty> = ::std::sync::OnceLock::new();
                INSTANCE.get_or_init(<$ty as ::core::default::Default>::default)
            }
        }

        /// The plugin's function table (static, never freed). A binary that links this
        /// crate as an rlib passes it to the host's registry as a built-in.
        pub fn plugin_table() -> &'static $crate::PluginTable {
            static TABLE: $crate::PluginTable = $crate::export::table_of::<$ty>();
            &TABLE
        }

        const _: () = {
            #[unsafe(export_name = concat!("vouch_plugin_", stringify!($symbol_id)))]
            extern "C" fn __vouch_plugin_export() -> *const $crate::PluginTable {
                ::std::panic::catch_unwind(plugin_table)
                    .map_or(::std::ptr::null(), |t| t as *const $crate::PluginTable)
            }
        };

        #[cfg(test)]
        #[test]
        fn __vouch_export_symbol_matches_descriptor_id() {
            let described = <$ty as $crate::Specialist>::describe(
                <$ty as $crate::export::Exported>::instance(),
            );
            assert_eq!(
                $crate::export_symbol(&described.id),
                concat!("vouch_plugin_", stringify!($symbol_id)),
                "export_specialist!'s first argument must be the plugin id with `-` replaced by `_`"
            );
        }
    };
}
