//! Grounding through the engine: the date fact reaches the prompt and the checks, and every
//! completion carries its `validation`.
mod common;

use common::{fixtures, Case};
use needle_web::json::Value;
use needle_web::session::{Engine, LoadOptions, Request};

#[test]
fn the_date_fact_is_prefixed_to_the_system_text_and_checked_as_a_fact() {
    let case = Case::load(fixtures().join("v3/local_global_taps"));
    let mut engine = Engine::load(&case.bytes, &LoadOptions::default()).unwrap();
    let tools = case.json.get("prompt").unwrap().get("tools_json").unwrap().as_str().unwrap();
    let mut req = Request::new("what about tomorrow, 2 people", tools);
    req.system = Some("Be brief.");
    req.date = Some("2026-12-02 Wed 06:45");
    req.max_tokens = 3;
    let done = engine.generate(&req, |_| true).unwrap();
    assert!(
        done.prompt
            .starts_with("<|im_start|>system\ndate: 2026-12-02 Wed 06:45; Be brief.<|im_end|>\n"),
        "{}",
        done.prompt
    );
    let envelope = done.to_value();
    let validation = envelope.get("validation").unwrap();
    assert_eq!(validation.get("negation"), Some(&Value::Bool(false)));
    assert!(validation.get("ungrounded").unwrap().as_array().is_some());
    // A caller's own date stays; a malformed one is refused before anything runs.
    req.system = Some("date: 2020-01-01");
    assert!(engine
        .generate(&req, |_| true)
        .unwrap()
        .prompt
        .starts_with("<|im_start|>system\ndate: 2020-01-01<|im_end|>"));
    req.date = Some("tomorrow");
    assert_eq!(engine.start(&req).unwrap_err().code(), "invalid_argument");
}
