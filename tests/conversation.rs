//! Conversations: a three-turn exchange run turn by turn on one engine (each turn reusing the
//! state the previous one left) gives the logits of prefilling the whole rendered conversation
//! from scratch, and the rendered history is the single-turn prompt continued.
mod common;

use common::{case_dirs, fixtures, Case};
use needle_web::json::Value;
use needle_web::prompt::{self, Role, Turn};
use needle_web::session::{Conversation, Engine, KvPrecision, LoadOptions, Numerics, Request};

#[test]
fn a_three_turn_conversation_gives_the_logits_of_its_whole_rendering_from_scratch() {
    let mut compared = 0;
    for case in
        ["v3", "v2"].into_iter().flat_map(|g| case_dirs(&fixtures().join(g))).map(Case::load)
    {
        let p = case.json.get("prompt").unwrap();
        let (query, tools, system) = (
            p.get("query").unwrap().as_str().unwrap(),
            p.get("tools_json").unwrap().as_str().unwrap(),
            p.get("system").and_then(Value::as_str),
        );
        for (kv, numerics) in
            [(KvPrecision::F32, Numerics::Exact), (KvPrecision::Int8, Numerics::Deploy)]
        {
            let opts = LoadOptions { kv: Some(kv), numerics, ..LoadOptions::default() };
            let mut engine = Engine::load(&case.bytes, &opts).unwrap();
            let mut scratch = Engine::load(&case.bytes, &opts).unwrap();
            let mut answers: Vec<String> = Vec::new();
            let inputs = [
                (Role::User, query),
                (Role::Tool, r#"[{"ok":true,"temperature":21}]"#),
                (Role::User, "and now turn it off"),
            ];
            for (n, &(role, text)) in inputs.iter().enumerate() {
                let mut turns: Vec<Turn> = Vec::new();
                for (i, &(r, t)) in inputs[..n].iter().enumerate() {
                    turns.push(Turn { role: r, text: t });
                    turns.push(Turn { role: Role::Assistant, text: &answers[i] });
                }
                // A tool turn is the newest message itself: the request's query stays empty.
                let query = if role == Role::User { text } else { "" };
                if role == Role::Tool {
                    turns.push(Turn { role, text });
                }
                let mut req = Request::new(query, tools);
                req.turns = &turns;
                req.system = system;
                req.max_tokens = 5;
                engine.start(&req).unwrap();
                let logits = engine.logits().to_vec();
                while engine.next_token().unwrap().is_some() {}
                let done = engine.finish().unwrap();
                // A bare-query first turn (no tools, no system) shares nothing with the template.
                let bare = n == 1
                    && !answers.is_empty()
                    && engine.render(inputs[0].1, tools, system).unwrap() == inputs[0].1;
                assert!(
                    n == 0 || bare || done.cached_tokens > 0,
                    "{}: turn {n} reused nothing",
                    case.name
                );
                let rows = scratch.logits_for(&done.prompt_ids).unwrap();
                let last = &rows[rows.len() - logits.len()..];
                // Exact: the prefix cache's contract is a fresh session's result, bit for bit.
                let differ =
                    logits.iter().zip(last).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
                assert_eq!(logits.len(), last.len());
                assert_eq!(
                    differ, 0,
                    "{} {kv:?} {numerics:?} turn {n}: {differ} logits differ",
                    case.name
                );
                compared += 1;
                answers.push(done.response.text);
            }
        }
    }
    assert!(compared >= 36, "only {compared} turns compared");
}

#[test]
fn a_conversation_continues_the_single_turn_prompt() {
    let tools = needle_web::json::parse(r#"[{"name":"f","parameters":{}}]"#).unwrap();
    let single = prompt::render_value("hi", Some(&tools), Some("sys"));
    let first = prompt::render_conversation(&[], "hi", Some(&tools), Some("sys")).unwrap();
    assert_eq!(first.text, single);
    let turns = [
        Turn { role: Role::User, text: "hi" },
        Turn { role: Role::Assistant, text: "<tool_call>[]</tool_call>" },
        Turn { role: Role::Tool, text: "[1]" },
        Turn { role: Role::Assistant, text: "done" },
    ];
    let convo = prompt::render_conversation(&turns, "again", Some(&tools), Some("sys")).unwrap();
    let stem = single.strip_suffix("<|im_start|>assistant\n").unwrap();
    assert!(convo.text.starts_with(stem), "{}", convo.text);
    assert_eq!(
        &convo.text[stem.len()..],
        "<|im_start|>assistant\n<tool_call>[]</tool_call><|im_end|>\n<|im_start|>user\n<tool_result>[1]</tool_result><|im_end|>\n\
         <|im_start|>assistant\ndone<|im_end|>\n<|im_start|>user\nagain<|im_end|>\n<|im_start|>assistant\n"
    );
    assert_eq!(convo.text.matches("<tools>").count(), 1, "the tool list is written once");
    assert_eq!(&convo.text[convo.newest..convo.newest + 5], "again");
    assert_eq!(&convo.text[convo.head..convo.head + 2], "hi");
    // Nothing to answer: a conversation ending with the model's own turn.
    assert!(prompt::render_conversation(&turns, "", Some(&tools), None).is_err());
    assert!(prompt::render_conversation(&turns[..2], "", None, None).is_err());
}

#[test]
fn a_conversation_keeps_its_turns_and_answers_as_a_fresh_session_given_them() {
    let case = Case::load(fixtures().join("v3/local_global_taps"));
    let tools = case.json.get("prompt").unwrap().get("tools_json").unwrap().as_str().unwrap();
    let opts =
        LoadOptions { kv: Some(KvPrecision::F32), context: Some(200), ..LoadOptions::default() };
    let mut engine = Engine::load(&case.bytes, &opts).unwrap();
    let mut fresh = Engine::load(&case.bytes, &opts).unwrap();
    let mut template = Request::new("", tools);
    template.max_tokens = 4;
    let mut convo = Conversation::new();
    for (role, text) in
        [(Role::User, "first"), (Role::Tool, "[{\"ok\":true}]"), (Role::User, "second")]
    {
        let before: Vec<(Role, String)> =
            convo.turns().map(|t| (t.role, t.text.to_owned())).collect();
        let done = convo.send(&mut engine, &template, role, text, |_| true).unwrap();
        // The same request built by hand, on an engine that holds nothing.
        let mut turns: Vec<Turn> = before.iter().map(|(r, t)| Turn { role: *r, text: t }).collect();
        let query = if role == Role::User { text } else { "" };
        if role == Role::Tool {
            turns.push(Turn { role, text });
        }
        fresh.reset();
        let want = fresh
            .generate(&Request { query, turns: &turns, ..template.clone() }, |_| true)
            .unwrap();
        assert_eq!((done.prompt_ids, done.tokens), (want.prompt_ids, want.tokens));
        assert_eq!(done.confidence.map(f32::to_bits), want.confidence.map(f32::to_bits));
    }
    assert_eq!(convo.sent(), 3);
    let roles: Vec<Role> = convo.turns().map(|t| t.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::Tool, Role::Assistant, Role::User, Role::Assistant]
    );
    // A message that does not fit fails with context_full and changes nothing.
    let long = "many words ".repeat(80);
    let err = convo.send(&mut engine, &template, Role::User, &long, |_| true).unwrap_err();
    assert_eq!(err.code(), "context_full");
    assert_eq!(convo.turns().count(), 6);
    convo.reset();
    assert_eq!((convo.turns().count(), convo.sent()), (0, 0));
}
