//! The models a review calls: the run's endpoint and client, one client per model a
//! specialist pins, the plan's instances bound to their model, and the endpoint check
//! before any stage starts (which may size the composition again for the window the
//! endpoint states).

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use vouch_core::ChangeSnapshot;
use vouch_llm::{EndpointConfig, Exchanges, ModelClient};

use super::change::{Change, apply_repo_config};
use super::request::{ReviewError, ReviewRequest};
use super::{ReviewPlan, build_plan, resize};
use crate::diagnostics::DiagnosticSink;
use crate::endpoint::{PlannedModel, client_config};
use crate::manifest::{Composition, EndpointFlags, ResolvedEndpoint};
use crate::registry::Registry;

/// The review's plan from `composition`, over the built-in specialists `builtins` and
/// the dynamic plugins the composition pins.
pub(crate) fn review_plan(
    composition: &Composition,
    builtins: &[&'static vouch_abi::PluginTable],
) -> Result<ReviewPlan, ReviewError> {
    let mut registry = Registry::new();
    for table in builtins {
        registry.add_builtin(table).map_err(|e| {
            ReviewError::Internal(format!(
                "registering a built-in specialist (a bug in vouch): {e}"
            ))
        })?;
    }
    build_plan(composition, &mut registry).map_err(ReviewError::usage)
}

/// The run's endpoint (none for an empty range: no model is called), its client, whether
/// structured outputs were requested, and a note on the base URL when it was adjusted.
pub(crate) struct RunModel {
    pub(crate) endpoint: Option<ResolvedEndpoint>,
    pub(crate) client: Arc<ModelClient>,
    pub(crate) requested: bool,
    pub(crate) note: Option<String>,
}

/// The endpoint the request, the user configuration and the manifest name, and its
/// client (through the exchange layer when one is open).
pub(crate) fn model_client(
    request: &ReviewRequest,
    composition: &Composition,
    snapshot: &ChangeSnapshot,
) -> Result<RunModel, ReviewError> {
    let exchanges = request.exchanges.as_ref();
    let flags = endpoint_flags(request.endpoint.clone(), exchanges.map(|e| &**e));
    let endpoint = if snapshot.is_empty() {
        None
    } else {
        Some(request.settings.endpoint(&flags, &composition.model)?)
    };
    let (mut config, note) = match &endpoint {
        Some(e) => client_config(e),
        None => (EndpointConfig::new("http://127.0.0.1:9/v1", "none"), None),
    };
    if let Some(timeout) = request.timeout {
        config.request_timeout = timeout;
    }
    let requested = config.structured_outputs;
    let client = ModelClient::new(config)
        .map_err(|e| ReviewError::Usage(format!("cannot configure the model client: {e}")))?;
    let client = client.through(exchanges);
    Ok(RunModel {
        endpoint,
        client: Arc::new(client),
        requested,
        note,
    })
}

/// The endpoint flags of a review, from the flags `given`. A replay needs no endpoint:
/// nothing is sent, so the base URL defaults to an address that is never contacted and
/// the model to the recording's.
fn endpoint_flags(given: EndpointFlags, exchanges: Option<&Exchanges>) -> EndpointFlags {
    let mut flags = given;
    if let Some(Exchanges::Replay(replayer)) = exchanges {
        flags
            .base_url
            .get_or_insert_with(|| "http://127.0.0.1:9/v1".into());
        if flags.model.is_none() {
            flags.model = replayer.model();
        }
    }
    flags
}

/// The clients of the models other than the run's default, by model name.
pub(crate) type StageClients = BTreeMap<String, Arc<ModelClient>>;

/// Applies the model rule ([`ResolvedEndpoint::model_for`]: a specialist's own model
/// wins, every other instance gets the run's default) to every instance of `plan`, and
/// builds one client (same endpoint) per model other than the default. Also returns each
/// distinct model the plan uses, in plan order, with the manifest entries that pin it:
/// the endpoint check checks every one of them.
pub(crate) fn stage_models(
    plan: &mut ReviewPlan,
    composition: &Composition,
    endpoint: Option<&ResolvedEndpoint>,
    client: &ModelClient,
) -> Result<(StageClients, Vec<PlannedModel>), ReviewError> {
    let mut clients = BTreeMap::new();
    let mut planned: Vec<PlannedModel> = Vec::new();
    let Some(endpoint) = endpoint else {
        return Ok((clients, planned));
    };
    for spec in plan.instances_mut() {
        let model = endpoint.model_for(spec.model.as_deref()).to_string();
        if model != client.config().model && !clients.contains_key(&model) {
            // Same endpoint: the request count and a refused key are shared.
            let own = client.for_model(&model).map_err(|e| {
                ReviewError::Usage(format!(
                    "cannot configure the model client for {model}: {e}"
                ))
            })?;
            clients.insert(model.clone(), Arc::new(own));
        }
        if !planned.iter().any(|p| p.name == model) {
            planned.push(PlannedModel {
                name: model.clone(),
                pinned_by: Vec::new(),
            });
        }
        spec.model = Some(model);
    }
    record_pins(&mut planned, composition, endpoint);
    Ok((clients, planned))
}

/// Names, for each planned model, the manifest entries that pin it. A model is pinned
/// when an entry names it and it is not the default (the default model is named by the
/// setting that chose it).
fn record_pins(
    planned: &mut [PlannedModel],
    composition: &Composition,
    endpoint: &ResolvedEndpoint,
) {
    let manifest = composition.origin.display();
    let pins = composition
        .specialists
        .iter()
        .filter(|entry| entry.enabled)
        .filter_map(|entry| {
            let at = format!("[[specialist]] \"{}\" of the manifest {manifest}", entry.id);
            entry.model.as_ref().map(|m| (m, at))
        })
        .chain(
            composition
                .verifier
                .model
                .as_ref()
                .map(|m| (m, format!("[verifier] of the manifest {manifest}"))),
        );
    for (model, at) in pins {
        if *model == endpoint.model {
            continue;
        }
        if let Some(p) = planned.iter_mut().find(|p| p.name == *model)
            && !p.pinned_by.contains(&at)
        {
            p.pinned_by.push(at);
        }
    }
}

/// The endpoint check before the review: every planned model is asked once, and the
/// composition is sized again for the window the endpoint states.
pub(crate) struct EndpointCheck<'a> {
    pub(crate) request: &'a ReviewRequest,
    pub(crate) change: &'a Change,
    pub(crate) model: &'a RunModel,
    pub(crate) model_clients: &'a StageClients,
    pub(crate) planned_models: &'a [PlannedModel],
    pub(crate) diagnostics: &'a Arc<dyn DiagnosticSink>,
    pub(crate) job_id: &'a str,
    pub(crate) cancel: &'a CancellationToken,
}

impl EndpointCheck<'_> {
    /// Checks the endpoint when a model will be called; returns the check's messages for
    /// the report, after resizing `composition` and `plan` when the endpoint stated a
    /// window that changes them. A replay sends nothing, so there is no endpoint to
    /// check.
    pub(crate) async fn run(
        self,
        composition: &mut Composition,
        plan: &mut ReviewPlan,
    ) -> Result<Vec<String>, ReviewError> {
        let replaying = matches!(
            self.request.exchanges.as_deref(),
            Some(Exchanges::Replay(_))
        );
        let Some(endpoint) = self
            .model
            .endpoint
            .as_ref()
            .filter(|_| !replaying && calls_a_model(self.change, plan))
        else {
            return Ok(Vec::new());
        };
        let client_for = |model: &str| {
            self.model_clients
                .get(model)
                .cloned()
                .unwrap_or_else(|| self.model.client.clone())
        };
        let (messages, stated) = crate::endpoint::check(
            self.planned_models,
            client_for,
            endpoint,
            self.diagnostics,
            self.job_id,
            self.cancel,
        )
        .await?;
        if let Some(resized) = self.resized_for(composition, stated)? {
            resize(plan, &resized);
            *composition = resized;
        }
        Ok(messages)
    }

    /// The composition sized again for the window the endpoint stated (`stated`), with
    /// the run's concurrency and the repository file applied as before, when that
    /// changes its window (the configuration sets none, and the endpoint stated one);
    /// else `None`.
    fn resized_for(
        &self,
        composition: &Composition,
        stated: Option<u32>,
    ) -> Result<Option<Composition>, ReviewError> {
        let Some(stated) = stated else {
            return Ok(None);
        };
        let request = self.request;
        let mut resized = request
            .settings
            .composition_for(request.manifest.as_deref(), Some(stated))?
            .composition;
        if resized.window == composition.window {
            return Ok(None);
        }
        resized.concurrency = composition.concurrency;
        if request.repo_config {
            apply_repo_config(&mut resized, &self.change.reader)?;
        }
        Ok(Some(resized))
    }
}

/// Whether the review will call a model: the partition leaves some changed file for the
/// lanes (a binary file too, under `binary = "metadata"`; the same rule as the review's
/// own partition, so a change of only a logo learns the window and checks the endpoint).
fn calls_a_model(change: &Change, plan: &ReviewPlan) -> bool {
    let sides = |path: &str| {
        change
            .reader
            .binary_sides(path)
            .unwrap_or(vouch_git::BinarySides::Text)
    };
    !super::partition::partition_files(&change.snapshot, &plan.exclusion, plan.binary, &sides)
        .expected
        .is_empty()
}
