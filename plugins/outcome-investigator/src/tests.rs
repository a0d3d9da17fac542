use super::*;
use vouch_abi::{PromptRequest, Specialist};
use vouch_specialist_kit::sample;

#[test]
fn renders_the_intent_and_refuses_a_request_without_one() {
    let request = sample::prompt_request();
    let prompt = OutcomeInvestigator.render_prompt(&request).unwrap();
    assert!(prompt.user.contains(&request.intent.clone().unwrap().title));
    let err = OutcomeInvestigator
        .render_prompt(&PromptRequest {
            intent: None,
            ..request
        })
        .unwrap_err();
    assert!(err.contains("intent"), "{err}");
}
