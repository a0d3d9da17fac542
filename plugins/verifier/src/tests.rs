use super::*;
use vouch_abi::{PromptRequest, Specialist};
use vouch_specialist_kit::sample;

#[test]
fn prompt_lists_every_candidate_id() {
    let request = sample::prompt_request();
    let prompt = Verifier.render_prompt(&request).unwrap();
    assert!(request.candidates.len() >= 2);
    for c in &request.candidates {
        assert!(
            prompt
                .user
                .contains(&format!("<candidate id=\"{}\">", c.id)),
            "{} has no block",
            c.id
        );
        assert!(prompt.user.contains(&format!("\"{}\"", c.id)));
    }
}

#[test]
fn prompt_carries_no_intent_and_refuses_an_empty_batch() {
    let request = sample::prompt_request();
    let prompt = Verifier.render_prompt(&request).unwrap();
    assert!(!prompt.user.contains(&request.intent.clone().unwrap().title));
    let err = Verifier
        .render_prompt(&PromptRequest {
            candidates: vec![],
            ..request
        })
        .unwrap_err();
    assert!(err.contains("candidate"), "{err}");
}
