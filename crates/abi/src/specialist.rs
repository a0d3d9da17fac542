//! The one trait every specialist implements.

use serde_json::Value;

use crate::payload::ContractRequest;
use crate::payload::{Descriptor, ParsedReply, PromptRequest, RenderedPrompt};

/// A specialist: pure and stateless. It renders its role prompt, declares its output
/// contract as a bounded JSON Schema, and parses replies. It gets no network, no file
/// system and no model; the host does all IO and renders every policy text (expected
/// files, repair, coverage retry, forced synthesis).
///
/// Implementations are exported across the C ABI with [`crate::export_specialist!`], and
/// the host calls them only through that table, for built-in and dynamic plugins alike.
pub trait Specialist: Send + Sync + 'static {
    /// Who the plugin is. Must be constant for the library's lifetime.
    fn describe(&self) -> Descriptor;

    /// The role prompt for one stage instance.
    ///
    /// # Errors
    /// A message for the host when the request cannot be rendered.
    fn render_prompt(&self, request: &PromptRequest) -> Result<RenderedPrompt, String>;

    /// The output contract (a bounded JSON Schema) of this instance's final answer.
    fn contract(&self, request: &ContractRequest) -> Value;

    /// Parses and normalises a reply object the host extracted from the model's text.
    ///
    /// # Errors
    /// A message naming what does not fit the contract; the host shows it to the
    /// isolated repair call.
    fn parse(&self, reply: &Value) -> Result<ParsedReply, String>;
}
