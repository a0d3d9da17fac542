use super::*;
use vouch_abi::{PromptRequest, Specialist};
use vouch_specialist_kit::sample;

#[test]
fn renders_the_objective_or_says_there_is_none() {
    let request = sample::prompt_request();
    let with = ObjectiveReview.render_prompt(&request).unwrap();
    assert!(with.user.contains(&request.intent.clone().unwrap().title));
    assert!(with.user.contains(TASK));
    let without = ObjectiveReview
        .render_prompt(&PromptRequest {
            intent: None,
            ..request
        })
        .unwrap();
    assert!(!without.user.contains("<intent"));
    assert!(without.user.contains(TASK_WITHOUT_OBJECTIVE));
}
