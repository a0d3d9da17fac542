use super::*;
use vouch_abi::{PromptRequest, Specialist};
use vouch_specialist_kit::sample;

#[test]
fn prompt_never_carries_the_stated_intent() {
    let request = sample::prompt_request();
    let intent = request.intent.clone().expect("sample has intent");
    for tools in [true, false] {
        let prompt = GenericInvestigator
            .render_prompt(&PromptRequest {
                tools_available: tools,
                ..request.clone()
            })
            .unwrap();
        let text = format!("{}\n{}", prompt.system, prompt.user);
        assert!(!text.contains(&intent.title), "intent title leaked");
        for sentence in intent.body.split(". ") {
            assert!(!text.contains(sentence.trim()), "intent body leaked");
        }
        let lower = text.to_lowercase();
        for word in ["pull request", "pull-request", "description", "intent"] {
            assert!(!lower.contains(word), "prompt mentions {word:?}");
        }
    }
}
