//! `vouch specialists list`: the built-in specialists, and the plugins the composition in
//! force (`--manifest`, else the user configuration's, else the built-in default) pins.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use vouch_host::manifest::PluginSource;
use vouch_host::registry::Registry;

use crate::builtins;
use crate::stdout::Text;
use vouch_host::settings::UserSettings;

/// Arguments of `vouch specialists list`.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Composition manifest whose pinned plugins to list.
    #[arg(long)]
    pub(crate) manifest: Option<PathBuf>,
}

/// Prints one line per built-in specialist and one per entry of the composition.
pub(crate) fn list(args: &ListArgs) -> Result<i32> {
    let mut registry = Registry::new();
    for table in builtins::tables() {
        registry
            .add_builtin(table)
            .context("registering a built-in specialist (a bug in vouch)")?;
    }
    let mut text = Text::default();
    text.line(format_args!("Built in:"));
    for handle in registry.specialists() {
        let d = handle.descriptor();
        text.line(format_args!(
            "  {} {}  ({})",
            d.id,
            d.version,
            d.role.as_str()
        ));
    }
    let user = UserSettings::load(None, crate::builtins::ids())?;
    if !user.config.plugins.is_empty() {
        text.line(format_args!("Pinned in the user configuration:"));
        for (id, pin) in &user.config.plugins {
            text.line(format_args!(
                "  {id}  library {} sha256 {}",
                pin.library.display(),
                pin.sha256
            ));
        }
    }
    let applied = user.composition_applied(args.manifest.as_deref())?;
    composition_lines(&applied, &mut text);
    text.print("the list of specialists")?;
    Ok(0)
}

/// The composition's entries, one line each, with their pins.
fn composition_lines(applied: &vouch_host::settings::UserComposition, text: &mut Text) {
    let composition = &applied.composition;
    text.line(format_args!(
        "Composition {:?} ({}):",
        composition.name,
        composition.origin.display()
    ));
    let entries = composition
        .specialists
        .iter()
        .map(|s| {
            (
                &s.id,
                &s.version,
                s.role.as_str(),
                &s.source,
                s.instances,
                s.enabled,
            )
        })
        .chain(std::iter::once((
            &composition.verifier.id,
            &composition.verifier.version,
            vouch_abi::Role::Verifier.as_str(),
            &composition.verifier.source,
            1,
            true,
        )));
    for (id, version, role, source, instances, enabled) in entries {
        let state = if enabled {
            format!("×{instances}")
        } else {
            "disabled".into()
        };
        match source {
            PluginSource::BuiltIn => text.line(format_args!(
                "  {id} {version}  ({role}, {state}, built in)"
            )),
            PluginSource::Dynamic { library, sha256 } => text.line(format_args!(
                "  {id} {version}  ({role}, {state}{}) library {} sha256 {sha256}",
                if applied.pinned.contains(id) {
                    ", pinned by the user configuration"
                } else {
                    ""
                },
                library.display()
            )),
        }
    }
}
