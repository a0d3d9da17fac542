//! The one entry point of a review: from the request to the self-checked report.
//!
//! Phases: the composition (user configuration, run overrides) → the change (range,
//! snapshot, the repository's own configuration from base) → the plan and its models →
//! the endpoint check (which may size the plan again for the window the endpoint
//! states) → the review ([`run_review`]) → the report.

use std::sync::Arc;

use super::change::{Change, apply_repo_config, open_change};
use super::env::{ReviewInputs, RunMemo, StageServices};
use super::models::{EndpointCheck, RunModel, model_client, review_plan, stage_models};
use super::report::{ReportContext, build_report, closing_messages};
use super::request::{ReviewError, ReviewOutcome, ReviewRequest, ReviewServices};
use super::{ReviewEnv, collect_policy, detect_intent, run_review};
use crate::manifest::Composition;

/// Runs one review as `request` describes it and returns its self-checked report.
/// Nothing is printed or written: progress and diagnostics go to `services`, and a
/// cancellation (`services.cancel`) ends the review `aborted` with its report made.
///
/// # Errors
/// [`ReviewError::Usage`] when something the request names cannot be used (range,
/// manifest, configuration, endpoint: the message says what to change), before any
/// stage starts; [`ReviewError::Internal`] when vouch fails itself.
pub async fn run(
    request: ReviewRequest,
    services: ReviewServices,
) -> Result<ReviewOutcome, ReviewError> {
    let mut composition = request.settings.composition(request.manifest.as_deref())?;
    composition.concurrency = request.concurrency.unwrap_or(composition.concurrency);
    let change = open_change(
        &request.repo,
        request.base.as_deref(),
        &request.head,
        &services.cancel,
    )
    .await?;
    let mut notes = Vec::new();
    if request.repo_config {
        notes.extend(apply_repo_config(&mut composition, &change.reader)?);
    }
    let excluded = |path: &str| crate::manifest::excluded(&composition, path).is_some();
    let (change, entering) = change.with_entering_files(excluded, &services.cancel)?;
    notes.extend(entering);
    let model = model_client(&request, &composition, &change.snapshot)?;
    notes.extend(model.note.clone());
    let (env, plan) = prepare(&request, &services, &mut composition, &change, &model).await?;
    let mut run = run_review(env, &plan.plan).await;
    (services.working_set_dropped)();
    services.diagnostics.flush();
    closing_messages(
        (request.base.is_some(), &request.head),
        &change,
        &model,
        plan.endpoint_messages,
        &mut run,
    );
    let context = ReportContext {
        repo: &request.repo,
        composition: &plan.plan.composition,
        requested: model.requested,
        notes,
        // The window the budgets were sized for, when a model was to be called.
        context_window: model.endpoint.as_ref().map(|_| composition.window),
        command_line: &request.command_line,
    };
    Ok(ReviewOutcome {
        report: build_report(context, run)?,
    })
}

/// The plan a review runs, with the endpoint check's messages for its report.
struct Planned {
    plan: super::ReviewPlan,
    endpoint_messages: Vec<String>,
}

/// Builds the plan, binds its instances to their models, checks the endpoint (sizing
/// the plan again for a window it states), and assembles what every stage reads.
async fn prepare(
    request: &ReviewRequest,
    services: &ReviewServices,
    composition: &mut Composition,
    change: &Change,
    model: &RunModel,
) -> Result<(Arc<ReviewEnv>, Planned), ReviewError> {
    let mut plan = review_plan(composition, &services.builtins)?;
    let (model_clients, planned_models) = stage_models(
        &mut plan,
        composition,
        model.endpoint.as_ref(),
        &model.client,
    )?;
    let intent = detect_intent(&request.pull_request, &change.snapshot);
    let job_id = job_id();
    let endpoint_messages = EndpointCheck {
        request,
        change,
        model,
        model_clients: &model_clients,
        planned_models: &planned_models,
        diagnostics: &services.diagnostics,
        job_id: &job_id,
        cancel: &services.cancel,
    }
    .run(composition, &mut plan)
    .await;
    services.diagnostics.flush();
    let endpoint_messages = endpoint_messages?;
    let env = Arc::new(ReviewEnv {
        inputs: ReviewInputs {
            snapshot: change.snapshot.clone(),
            intent,
            policy: collect_policy(&change.reader, &change.snapshot),
            tools: request.tools.unwrap_or(composition.tools),
            inline_bytes: request.inline_bytes,
            window: composition.window,
        },
        services: StageServices {
            reader: change.reader.clone(),
            client: model.client.clone(),
            model_clients,
            presenter: services.presenter.clone(),
            diagnostics: services.diagnostics.clone(),
            job_id,
            cancel: services.cancel.clone(),
        },
        memo: RunMemo::default(),
    });
    Ok((
        env,
        Planned {
            plan,
            endpoint_messages,
        },
    ))
}

/// A job id unique to this process and moment.
fn job_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("vouch-{:x}-{:x}", std::process::id(), nanos)
}
