//! Test plugins with broken tables, one export symbol each (ids `test-<case>`, version
//! `0.1.0`). Each table is a correct one with one thing changed:
//!
//! - `vouch_plugin_test_wrong_abi`: ABI major 999;
//! - `vouch_plugin_test_short_table`: `table_size` 16 (only the header and one field);
//! - `vouch_plugin_test_null_table`: returns a null table;
//! - `vouch_plugin_test_liar`: describes itself as `someone-else`;
//! - `vouch_plugin_test_future_payload`: payload version 99;
//! - `vouch_plugin_test_describe_panics`: `describe` panics.

use serde_json::Value;
use vouch_abi::export::{Exported, table_of};
use vouch_abi::{
    Descriptor, PAYLOAD_VERSION, ParsedReply, PluginTable, PromptRequest, RenderedPrompt, Role,
};
use vouch_specialist_kit::contract::{ContractRequest, candidate_contract, parse_candidate_reply};

/// A specialist whose descriptor is given by its constants.
pub struct Fake<const CASE: u8>;

const WRONG_ABI: u8 = 0;
const SHORT_TABLE: u8 = 1;
const LIAR: u8 = 2;
const FUTURE_PAYLOAD: u8 = 3;
const DESCRIBE_PANICS: u8 = 4;

impl<const CASE: u8> vouch_abi::Specialist for Fake<CASE> {
    fn describe(&self) -> Descriptor {
        let (id, payload_version) = match CASE {
            WRONG_ABI => ("test-wrong-abi", PAYLOAD_VERSION),
            SHORT_TABLE => ("test-short-table", PAYLOAD_VERSION),
            LIAR => ("someone-else", PAYLOAD_VERSION),
            FUTURE_PAYLOAD => ("test-future-payload", 99),
            _ => panic!("describe was asked to panic"),
        };
        Descriptor {
            id: id.into(),
            version: "0.1.0".into(),
            role: Role::Investigator,
            payload_version,
            description: String::new(),
        }
    }

    fn render_prompt(&self, request: &PromptRequest) -> Result<RenderedPrompt, String> {
        Ok(RenderedPrompt {
            system: String::new(),
            user: request.label.clone(),
        })
    }

    fn contract(&self, request: &ContractRequest) -> Value {
        candidate_contract(request)
    }

    fn parse(&self, reply: &Value) -> Result<ParsedReply, String> {
        parse_candidate_reply(reply)
    }
}

impl<const CASE: u8> Exported for Fake<CASE> {
    fn instance() -> &'static Self {
        &Fake
    }
}

static WRONG_ABI_TABLE: PluginTable = PluginTable {
    abi_major: 999,
    ..table_of::<Fake<WRONG_ABI>>()
};

static SHORT_TABLE_TABLE: PluginTable = PluginTable {
    table_size: 16,
    ..table_of::<Fake<SHORT_TABLE>>()
};

static LIAR_TABLE: PluginTable = table_of::<Fake<LIAR>>();
static FUTURE_PAYLOAD_TABLE: PluginTable = table_of::<Fake<FUTURE_PAYLOAD>>();
static DESCRIBE_PANICS_TABLE: PluginTable = table_of::<Fake<DESCRIBE_PANICS>>();

/// ABI major 999.
#[unsafe(no_mangle)]
pub extern "C" fn vouch_plugin_test_wrong_abi() -> *const PluginTable {
    &WRONG_ABI_TABLE
}

/// A table that claims to be 16 bytes long.
#[unsafe(no_mangle)]
pub extern "C" fn vouch_plugin_test_short_table() -> *const PluginTable {
    &SHORT_TABLE_TABLE
}

/// No table at all.
#[unsafe(no_mangle)]
pub extern "C" fn vouch_plugin_test_null_table() -> *const PluginTable {
    std::ptr::null()
}

/// Exported under `test-liar` but describes itself as `someone-else`.
#[unsafe(no_mangle)]
pub extern "C" fn vouch_plugin_test_liar() -> *const PluginTable {
    &LIAR_TABLE
}

/// Payload version 99.
#[unsafe(no_mangle)]
pub extern "C" fn vouch_plugin_test_future_payload() -> *const PluginTable {
    &FUTURE_PAYLOAD_TABLE
}

/// `describe` panics.
#[unsafe(no_mangle)]
pub extern "C" fn vouch_plugin_test_describe_panics() -> *const PluginTable {
    &DESCRIBE_PANICS_TABLE
}
